#!/usr/bin/env bash
# Brings up, checks and stops the real engines the Docker and Slurm tests run against: dockerd with a
# locally built image (no pulls) and a single-node Slurm cluster with sacct accounting, all as root.
#   scripts/services.sh up|down|status|env [docker|slurm]
# Everything it creates lives under one state directory, HELIX_SERVICES_DIR (/var/lib/helix-services).
set -euo pipefail

STATE="${HELIX_SERVICES_DIR:-/var/lib/helix-services}"
DOCKER_SOCK="${HELIX_DOCKER_SOCKET:-/var/run/docker.sock}"
DB_PORT="${HELIX_SERVICES_DB_PORT:-16306}"
IMAGE="helix-seqkit:local"
# Bump when the image recipe (build_image in services-docker.sh) changes, so `up` rebuilds
# instead of reusing the old image.
IMAGE_RECIPE=1
export SLURM_CONF="$STATE/slurm/slurm.conf"
HERE="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=scripts/services-lib.sh
. "$HERE/services-lib.sh"

cmd="${1:-}"
which="${2:-all}"
case "$which" in all|docker|slurm) ;; *) die "unknown service '$which': expected docker or slurm" ;; esac
want() { [ "$which" = all ] || [ "$which" = "$1" ]; }

# ---- installation -------------------------------------------------------------------------------

install_missing() {
  local need="" p
  if want docker; then
    command -v dockerd >/dev/null 2>&1 || need="$need docker.io"
    [ -x /bin/busybox ] && file_is_static /bin/busybox || need="$need busybox-static"
    command -v seqkit >/dev/null 2>&1 || need="$need seqkit"
  fi
  if want slurm; then
    command -v munged >/dev/null 2>&1 || need="$need munge"
    command -v slurmctld >/dev/null 2>&1 || need="$need slurmctld"
    command -v slurmd >/dev/null 2>&1 || need="$need slurmd"
    command -v sinfo >/dev/null 2>&1 || need="$need slurm-client"
    command -v slurmdbd >/dev/null 2>&1 || need="$need slurmdbd"
    command -v mariadbd >/dev/null 2>&1 || need="$need mariadb-server"
  fi
  need="${need# }"
  [ -z "$need" ] && return 0
  if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    local why="not running as root"
    command -v apt-get >/dev/null 2>&1 || why="apt-get not found"
    echo "services: these Debian packages are missing: $need" >&2
    echo "cannot install them ($why); install them, then run scripts/services.sh up again:" >&2
    echo "  sudo apt-get update && sudo apt-get install -y $need" >&2
    exit 1
  fi
  echo "services: installing $need"
  # Package scripts must not start their own daemons with Debian's configs: this script starts them.
  local policy_added=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d
    policy_added=1
  fi
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need || p=$?
  [ -n "$policy_added" ] && rm -f /usr/sbin/policy-rc.d
  [ -z "${p:-}" ] || die "apt-get install $need failed (exit $p)"
}

# shellcheck source=scripts/services-docker.sh
. "$HERE/services-docker.sh"
# shellcheck source=scripts/services-slurm.sh
. "$HERE/services-slurm.sh"

case "$cmd" in
  up)
    if [ "$(id -u)" -ne 0 ]; then
      install_missing
      die "up starts the daemons as root: run it as root (sudo scripts/services.sh up)"
    fi
    mkdir -p "$STATE"
    # Several test files may call `up` at once: one installs and starts, the others wait, then check.
    exec 9> "$STATE/.lock"
    flock 9
    install_missing
    want docker && docker_up
    want slurm && slurm_up
    rc=0
    want docker && { docker_status || rc=1; }
    want slurm && { slurm_status || rc=1; }
    exit "$rc"
    ;;
  down)
    [ -d "$STATE" ] || exit 0
    exec 9> "$STATE/.lock"
    flock 9
    want slurm && slurm_down
    want docker && docker_down
    exit 0
    ;;
  status)
    rc=0
    want docker && { docker_status || rc=1; }
    want slurm && { slurm_status || rc=1; }
    exit "$rc"
    ;;
  env)
    # For a shell or a test: where the clients find the engines this script runs.
    echo "export HELIX_SERVICES_DIR=$STATE"
    echo "export DOCKER_HOST=unix://$DOCKER_SOCK"
    echo "export SLURM_CONF=$SLURM_CONF"
    ;;
  *)
    echo "usage: scripts/services.sh up|down|status|env [docker|slurm]" >&2
    exit 2
    ;;
esac
