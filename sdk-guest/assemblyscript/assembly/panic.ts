// Panic recording for helix/v1: the abort handler that asconfig routes `abort` to, and the
// `helix_panic` export through which the host reads the last message after a trap.

/** Bytes reserved for the panic message; longer messages are cut at a character boundary. */
export const PANIC_CAPACITY: i32 = 1024;

// A static region, so recording a panic never allocates: the panic may itself be an
// out-of-memory or stack-overflow abort, where allocating again would recurse.
const panicBuffer: usize = memory.data(PANIC_CAPACITY);
let panicLength: i32 = 0;
let panicking: bool = false;

/**
 * The SDK's abort handler, installed by `--use abort=~lib/@helix/sdk-as/assembly/panic/helixAbort`
 * (the shared asconfig does this). It records "message at file:line:column" for `helix_panic`
 * and traps. Reached by `abort()`, `assert()`, `throw`, and every runtime check in the standard
 * library (bounds, allocation, stack), so none of them needs the `env.abort` import.
 */
export function helixAbort(
  message: string | null = null,
  fileName: string | null = null,
  line: u32 = 0,
  column: u32 = 0,
): void {
  // A second abort while recording (for example a bad string header) must not loop.
  if (!panicking) {
    panicking = true;
    panicLength = 0;
    appendString(message !== null ? message : "abort");
    if (fileName !== null) {
      appendString(" at ");
      appendString(fileName);
      appendAscii(0x3a);
      appendDecimal(line);
      appendAscii(0x3a);
      appendDecimal(column);
    }
  }
  unreachable();
}

/**
 * ABI export `helix_panic() -> i64`: packed `(ptr << 32) | len` of the UTF-8 message recorded by
 * the last abort, or 0 when there was none. Re-exported by every tool's entry file.
 */
export function helix_panic(): i64 {
  if (panicLength == 0) return 0;
  return (i64(panicBuffer) << 32) | i64(panicLength);
}

function appendAscii(byte: u32): void {
  if (panicLength < PANIC_CAPACITY) {
    store<u8>(panicBuffer + <usize>panicLength, <u8>byte);
    panicLength++;
  }
}

function appendDecimal(value: u32): void {
  let divisor: u32 = 1;
  while (value / divisor >= 10) divisor *= 10;
  while (divisor > 0) {
    appendAscii(0x30 + (value / divisor) % 10);
    divisor /= 10;
  }
}

// Encodes UTF-16 to UTF-8 by hand (String.UTF8.encode allocates), writing whole characters
// only, so a cut message is still valid UTF-8.
function appendString(text: string): void {
  const start = changetype<usize>(text);
  const units = text.length;
  for (let i = 0; i < units; i++) {
    let code = <u32>load<u16>(start + (<usize>i << 1));
    if (code >= 0xd800 && code < 0xdc00 && i + 1 < units) {
      const low = <u32>load<u16>(start + (<usize>(i + 1) << 1));
      if (low >= 0xdc00 && low < 0xe000) {
        code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
        i++;
      }
    }
    // Lone surrogates become U+FFFD so the message stays well-formed UTF-8.
    if (code >= 0xd800 && code < 0xe000) code = 0xfffd;
    const size: i32 = code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
    if (panicLength + size > PANIC_CAPACITY) return;
    if (size == 1) {
      appendAscii(code);
    } else if (size == 2) {
      appendAscii(0xc0 | (code >> 6));
      appendAscii(0x80 | (code & 0x3f));
    } else if (size == 3) {
      appendAscii(0xe0 | (code >> 12));
      appendAscii(0x80 | ((code >> 6) & 0x3f));
      appendAscii(0x80 | (code & 0x3f));
    } else {
      appendAscii(0xf0 | (code >> 18));
      appendAscii(0x80 | ((code >> 12) & 0x3f));
      appendAscii(0x80 | ((code >> 6) & 0x3f));
      appendAscii(0x80 | (code & 0x3f));
    }
  }
}
