#!/bin/sh
# The first step of `npm test`: installs the Debian packages the tests need, only those missing,
# or stops with one message naming them when it cannot (not root, or no apt-get).
#   openssl      a throwaway certificate for the HTTPS capability tests
#   clang, lld   the C guest SDK and the C toolpacks (clang --target=wasm32, wasm-ld)
#   seqkit       the reference the bundled sequence tools are checked against
#   chromium     opens the conformance report as a reviewer's browser would (headless), and
#                takes its screenshot
#   strace       shows which thread of helix flushes the store (a check of helix conformance)
#   gdb          pauses LMDB inside a close for the store lifecycle test; backtraces of crashed
#                processes in the store stress run
set -eu

need=""
command -v openssl >/dev/null 2>&1 || need="$need openssl"
command -v clang >/dev/null 2>&1 || need="$need clang"
command -v wasm-ld >/dev/null 2>&1 || need="$need lld"
command -v seqkit >/dev/null 2>&1 || need="$need seqkit"
command -v gdb >/dev/null 2>&1 || need="$need gdb"
command -v chromium >/dev/null 2>&1 || need="$need chromium"
command -v strace >/dev/null 2>&1 || need="$need strace"
need="${need# }"
[ -z "$need" ] && exit 0

if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  why="not running as root"
  command -v apt-get >/dev/null 2>&1 || why="apt-get not found"
  echo "npm test needs these Debian packages, missing here: $need" >&2
  echo "cannot install them ($why); install them, then run npm test again:" >&2
  echo "  sudo apt-get update && sudo apt-get install -y $need" >&2
  exit 1
fi

echo "test setup: installing $need"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $need
