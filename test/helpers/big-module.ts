// Builds helix/v1 modules of a chosen code size straight as bytes (text of that size would take
// wabt far longer than the module takes V8), for tests and measurements of per-module costs.

/** What a generated module is made of: `functions` fillers of about `bodyBytes` of code each. */
export interface BigModuleOptions {
  readonly functions: number;
  readonly bodyBytes: number;
  /** Whether `execute` calls every filler (so V8 compiles them all) or none; default true. */
  readonly callAll?: boolean;
}

const OUTPUT = new TextEncoder().encode('{"status":"ok","output":{"value":1}}');

/**
 * A module whose `execute` (optionally) calls each filler `(i32) -> i32` once, then answers
 * `{"status":"ok","output":{"value":1}}`; each filler adds 1 to its argument `bodyBytes / 3`
 * times. The code section is about `functions * bodyBytes` bytes.
 */
export function bigModule({ functions, bodyBytes, callAll = true }: BigModuleOptions): Uint8Array {
  const out: number[] = [0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00];
  const filler = fillerBody(Math.max(1, Math.floor(bodyBytes / 3)));
  const section = (id: number, body: number[]) => out.push(id, ...leb(body.length), ...body);
  // types: 0 (i32)->i32 for alloc and the fillers, 1 (i32 i32)->() dealloc, 2 (i32 i32)->i64 execute
  section(1, [3, 0x60, 1, 0x7f, 1, 0x7f, 0x60, 2, 0x7f, 0x7f, 0, 0x60, 2, 0x7f, 0x7f, 1, 0x7e]);
  section(3, [...leb(3 + functions), 0, 1, 2, ...new Array<number>(functions).fill(0)]);
  section(5, [1, 0, 1]);
  section(7, [4, ...name('memory'), 2, 0, ...name('alloc'), 0, 0, ...name('dealloc'), 0, 1, ...name('execute'), 0, 2]);
  const execute: number[] = [0];
  if (callAll) for (let i = 0; i < functions; i++) execute.push(0x41, 0, 0x10, ...leb(3 + i), 0x1a);
  execute.push(0x42, ...sleb(BigInt(16) * 2n ** 32n + BigInt(OUTPUT.length)), 0x0b);
  // The code section is written piecewise: spreading megabytes into push() would overflow the stack.
  const bodies: number[][] = [[0, 0x41, ...sleb(1024n), 0x0b], [0, 0x0b], execute];
  let size = leb(3 + functions).length;
  for (const b of bodies) size += leb(b.length).length + b.length;
  size += functions * (leb(filler.length).length + filler.length);
  const code = [0x0a, ...leb(size), ...leb(3 + functions)];
  for (const b of bodies) code.push(...leb(b.length), ...b);
  const head = Uint8Array.from([...out, ...code]);
  const fillerEntry = Uint8Array.from([...leb(filler.length), ...filler]);
  const segment = [1, 0, 0x41, 16, 0x0b, ...leb(OUTPUT.length), ...OUTPUT];
  const data = Uint8Array.from([11, ...leb(segment.length), ...segment]);
  const bytes = new Uint8Array(head.length + functions * fillerEntry.length + data.length);
  bytes.set(head, 0);
  for (let i = 0; i < functions; i++) bytes.set(fillerEntry, head.length + i * fillerEntry.length);
  bytes.set(data, head.length + functions * fillerEntry.length);
  return bytes;
}

function fillerBody(adds: number): number[] {
  const body = [0, 0x20, 0];
  for (let i = 0; i < adds; i++) body.push(0x41, 1, 0x6a);
  body.push(0x0b);
  return body;
}

function name(text: string): number[] {
  const bytes = [...new TextEncoder().encode(text)];
  return [...leb(bytes.length), ...bytes];
}

function leb(value: number): number[] {
  const bytes: number[] = [];
  do {
    let byte = value & 0x7f;
    value = Math.floor(value / 128);
    if (value !== 0) byte |= 0x80;
    bytes.push(byte);
  } while (value !== 0);
  return bytes;
}

function sleb(value: bigint): number[] {
  const bytes: number[] = [];
  for (;;) {
    const byte = Number(value & 0x7fn);
    value >>= 7n;
    if ((value === 0n && (byte & 0x40) === 0) || (value === -1n && (byte & 0x40) !== 0)) {
      bytes.push(byte);
      return bytes;
    }
    bytes.push(byte | 0x80);
  }
}
