// Rewrites one function body for fuel metering: charges each straight-line segment's static
// cost at its start, charges bulk memory and table operations by size just before they run,
// checks the counter at loop headers and call-making function entries, and keeps the exported
// counter exact wherever control calls out or leaves the function.

import { BodyDecoder } from './body-decoder.js';
import { type DynamicCharge, FuelEmitter } from './fuel-emitter.js';
import type { ParsedModule } from './parsed-module.js';
import { Reader } from './reader.js';
import type { Writer } from './writer.js';

// Why segments start where they do: every branch target is a loop header or the point after an
// `end`, and the only other ways into code are function entry, the arms of an `if`, and
// exception handlers; so control can enter a segment only at its start, and charging the
// whole segment there is exact for straight-line code and deterministic when a br_if or a
// trap leaves it early. Code after an unconditional transfer (br, return, throw, ...) is dead
// until the next segment start and is not charged.
//
// Why checks sit where they do: a run can only be unbounded through a loop or through calls
// (recursion), so the counter is checked at every loop header and at the entry of every
// function that makes a call. A function without calls runs at most its own body's length of
// straight-line code between loop headers before returning to a caller that will check. The
// entry check is left out of call-free functions because it is what costs: measured on V8 11.3,
// a loop calling a small leaf function ran 1.17x slower with it and 1.00x without.

/**
 * Kinds of insertion point; `arg` is the cost for charges, 1 for 64-bit dynamic operands, and
 * `store` marks segments that call out or leave the function, whose charge also stores the
 * counter to the global.
 */
const Ev = { entry: 0, charge: 1, loopCharge: 2, refresh: 3, bulk: 4, grow: 5, elems: 6 } as const;
type Ev = (typeof Ev)[keyof typeof Ev];
const dynamicKinds: Record<number, DynamicCharge> = { [Ev.bulk]: 'bulk', [Ev.grow]: 'grow', [Ev.elems]: 'elems' };

/** Instructions that cost nothing, as in wasmtime: they do no work of their own. */
const zeroCost = new Set([0x00, 0x01, 0x1a, 0x02, 0x03, 0x0f, 0x05, 0x0b, 0x06, 0x07, 0x19, 0x18, 0x1f]);
/** Instructions after which the rest of the block is unreachable. */
const transfers = new Set([0x00, 0x0c, 0x0e, 0x0f, 0x08, 0x09, 0x0a, 0x12, 0x13, 0x15]);
/** Calls that return here, after which the callee (or the host) may have changed the counter. */
const calls = new Set([0x10, 0x11, 0x14]);
/** Instructions that leave the function or trap: the global must be exact when they run. */
const exits = new Set([0x00, 0x0f, 0x08, 0x0a, 0x12, 0x13, 0x15]);
/** Branches, which leave the function when they target its outermost label. */
const branches = new Set([0x0c, 0x0d, 0x0e, 0xd5, 0xd6]);

/** Rewrites body `index` of `m` into `out` (size prefix included), metering with global `fuel`. */
export function rewriteBody(m: ParsedModule, index: number, fuel: number, out: Writer): void {
  const span = m.bodies[index]!;
  const type = m.types[m.funcTypes[m.importedFuncs + index]!]!;
  const d = new BodyDecoder(m, span, type.params.length);
  const localsEnd = d.readLocals();
  const pos: number[] = [localsEnd];
  const kind: Ev[] = [Ev.entry];
  const arg: number[] = [0];
  const store: number[] = [0];
  const add = (at: number, k: Ev, n: number) => {
    pos.push(at);
    kind.push(k);
    arg.push(n);
    store.push(0);
  };
  let segment = 0; // index of the current segment's charge event, -1 in dead code
  let wide = false;
  let narrow = false;
  let usesEh = false;
  let makesCalls = false;
  const dynamic = (k: Ev, is64: boolean) => {
    add(d.start, k, is64 ? 1 : 0);
    if (is64) wide = true;
    else narrow = true;
  };
  while (!d.finished) {
    d.next();
    const op = d.op;
    const live = segment >= 0;
    if (op === 0x40) dynamic(Ev.grow, m.memories[d.a]!.memory64);
    else if (op === 0xfc) {
      const sub = d.sub;
      if (sub === 8 || sub === 12) dynamic(sub === 8 ? Ev.bulk : Ev.elems, false);
      else if (sub === 10) dynamic(Ev.bulk, m.memories[d.a]!.memory64 && m.memories[d.b]!.memory64);
      else if (sub === 11) dynamic(Ev.bulk, m.memories[d.a]!.memory64);
      else if (sub === 14) dynamic(Ev.elems, m.tables[d.a]!.is64 && m.tables[d.b]!.is64);
      else if (sub === 15 || sub === 17) dynamic(Ev.elems, m.tables[d.a]!.is64);
    }
    if (live) {
      if (!zeroCost.has(op)) arg[segment]!++;
      const leaves = exits.has(op) || calls.has(op) || d.finished || (branches.has(op) && d.a === d.frames.length - 1);
      if (leaves) store[segment] = 1;
    }
    const end = d.r.pos;
    if (op === 0x06 || op === 0x1f) usesEh = true;
    if (op >= 0x10 && op <= 0x15) makesCalls = true;
    if (calls.has(op)) add(end, Ev.refresh, 0);
    if (op === 0x03) {
      segment = pos.length;
      add(end, Ev.loopCharge, 0);
    } else if (op === 0x04 || op === 0x05 || op === 0x07 || op === 0x19 || op === 0x18 || (op === 0x0b && !d.finished)) {
      segment = pos.length;
      add(end, Ev.charge, 0);
    } else if (transfers.has(op)) segment = -1;
  }

  // Local layout: the mirror of the counter (when used), then the scratch operands.
  let next = d.localCount;
  const mirror = usesEh ? -1 : next++;
  const u32 = narrow ? next++ : -1;
  const u64 = wide ? next++ : -1;
  const e = new FuelEmitter(fuel, mirror, u32, u64);
  const w = e.w;
  const r = new Reader(m.bytes, span.start, span.end);
  const groups = r.u32();
  const added = (mirror >= 0 ? 1 : 0) + (u32 >= 0 ? 1 : 0) + (u64 >= 0 ? 1 : 0);
  w.u32(groups + added).bytes(m.bytes.subarray(r.pos, localsEnd));
  if (mirror >= 0) w.u8(1).u8(0x7e);
  if (u32 >= 0) w.u8(1).u8(0x7f);
  if (u64 >= 0) w.u8(1).u8(0x7e);

  let cursor = localsEnd;
  for (let i = 0; i < pos.length; i++) {
    const at = pos[i]!;
    w.bytes(m.bytes.subarray(cursor, at));
    cursor = at;
    const k = kind[i]!;
    const n = arg[i]!;
    if (k === Ev.entry) e.entry(n, makesCalls, store[i] === 1);
    else if (k === Ev.charge || k === Ev.loopCharge) e.charge(n, k === Ev.loopCharge, store[i] === 1);
    else if (k === Ev.refresh) e.refresh();
    else e.dynamic(dynamicKinds[k]!, n === 1);
  }
  w.bytes(m.bytes.subarray(cursor, span.end));
  out.u32(w.length).bytes(w.finish());
}
