// Decodes a function body instruction by instruction with every immediate, tracks block
// nesting, records the proposals the code uses, and refuses unknown or unsupported opcodes.
// The instrumenter drives the same decoder, so both agree on every instruction boundary.

import { Feature } from './features.js';
import { ENGINE_LIMITS } from './module-bounds.js';
import type { BodySpan, ParsedModule } from './parsed-module.js';
import { Reader } from './reader.js';
import { RELAXED_SIMD_FIRST, SimdImm, simdImmediate } from './simd-opcodes.js';
import { readBlockType, readHeapType, readValType } from './value-types.js';

/** Kinds of control frame. */
export const FrameKind = { func: 0, block: 1, loop: 2, if: 3, else: 4, try: 5, catch: 6, catchAll: 7, tryTable: 8 } as const;

/** Most locals a function may declare; V8's limit, so larger bodies would not compile anyway. */
const MAX_LOCALS = ENGINE_LIMITS.locals;

const hex = (n: number) => `0x${n.toString(16).padStart(2, '0')}`;

/** Reads one function body; call `readLocals` once, then `next` until `finished`. */
export class BodyDecoder {
  readonly r: Reader;
  /** Control frames, innermost last; empty once the body's final `end` is read. */
  readonly frames: number[] = [FrameKind.func];
  /** Parameters plus declared locals. */
  localCount = 0;
  finished = false;
  /** Offset of the current instruction's opcode. */
  start = 0;
  /** The current opcode (first byte). */
  op = 0;
  /** The prefixed sub-opcode, or -1. */
  sub = -1;
  /** First memory or table index of the instruction, or for a branch its deepest label. */
  a = 0;
  /** Second memory or table index (memory.copy and table.copy sources). */
  b = 0;

  constructor(
    private readonly m: ParsedModule,
    readonly span: BodySpan,
    private readonly paramCount: number,
  ) {
    this.r = new Reader(m.bytes, span.start, span.end);
  }

  /** Reads the local declarations; returns the offset where they end. */
  readLocals(): number {
    const r = this.r;
    const groups = r.u32();
    let count = this.paramCount;
    for (let i = 0; i < groups; i++) {
      const at = r.pos;
      count += r.u32();
      if (count > MAX_LOCALS) r.fail(`too many locals (more than ${MAX_LOCALS})`, at);
      readValType(r, this.m);
    }
    this.localCount = count;
    return r.pos;
  }

  /** Reads a label; `a` keeps the deepest label of the instruction (for br_table, the max). */
  private label(): void {
    const at = this.r.pos;
    const depth = this.r.u32();
    if (depth >= this.frames.length) this.r.fail(`unknown label ${depth}`, at);
    if (depth > this.a) this.a = depth;
  }

  private index(limit: number, what: string): number {
    const at = this.r.pos;
    const index = this.r.u32();
    if (index >= limit) this.r.fail(`unknown ${what} ${index}`, at);
    return index;
  }

  private memory(): number {
    const index = this.index(this.m.memories.length, 'memory');
    if (index !== 0) this.m.features |= Feature.multiMemory;
    return index;
  }

  private table(): number {
    const index = this.index(this.m.tables.length, 'table');
    if (index !== 0) this.m.features |= Feature.referenceTypes;
    return index;
  }

  private memarg(): void {
    const r = this.r;
    const at = r.pos;
    const flags = r.u32();
    if (flags >= 0x80) r.fail(`malformed memop flags ${hex(flags)}`, at);
    const memory = flags & 0x40 ? this.memory() : 0;
    if (memory >= this.m.memories.length) r.fail(`unknown memory ${memory}`, at);
    if (this.m.memories[memory]!.memory64) r.u64();
    else r.u32();
    this.a = memory;
  }

  private data(): number {
    if (this.m.dataCount === null) this.r.fail('data count section required for memory.init and data.drop');
    return this.index(this.m.dataCount, 'data segment');
  }

  private pushBlock(kind: number): void {
    readBlockType(this.r, this.m);
    this.frames.push(kind);
  }

  /** Decodes the next instruction. */
  next(): void {
    const r = this.r;
    const m = this.m;
    const frames = this.frames;
    this.start = r.pos;
    const op = r.u8();
    this.op = op;
    this.sub = -1;
    this.a = 0;
    if (op >= 0x45 && op <= 0xc4) {
      if (op >= 0xc0) m.features |= Feature.signExt;
      return;
    }
    if (op >= 0x28 && op <= 0x3e) {
      this.memarg();
      return;
    }
    switch (op) {
      case 0x00:
      case 0x01:
      case 0x0f:
      case 0x1a:
      case 0x1b:
        return;
      case 0x02:
        this.pushBlock(FrameKind.block);
        return;
      case 0x03:
        this.pushBlock(FrameKind.loop);
        return;
      case 0x04:
        this.pushBlock(FrameKind.if);
        return;
      case 0x05:
        if (frames[frames.length - 1] !== FrameKind.if) r.fail('else without a matching if', this.start);
        frames[frames.length - 1] = FrameKind.else;
        return;
      case 0x06:
        m.features |= Feature.exceptions;
        this.pushBlock(FrameKind.try);
        return;
      case 0x07:
      case 0x19: {
        const top = frames[frames.length - 1]!;
        if (top !== FrameKind.try && top !== FrameKind.catch)
          r.fail(`${op === 7 ? 'catch' : 'catch_all'} without a matching try`, this.start);
        if (op === 0x07) this.index(m.tagCount, 'tag');
        frames[frames.length - 1] = op === 0x07 ? FrameKind.catch : FrameKind.catchAll;
        return;
      }
      case 0x08:
        m.features |= Feature.exceptions;
        this.index(m.tagCount, 'tag');
        return;
      case 0x09:
        this.label();
        return;
      case 0x0a:
        m.features |= Feature.exnref;
        return;
      case 0x0b:
        frames.pop();
        if (frames.length === 0) {
          this.finished = true;
          if (r.pos !== r.end) r.fail('operators remaining after the end of the function body');
        }
        return;
      case 0x0c:
      case 0x0d:
        this.label();
        return;
      case 0x0e: {
        const count = r.u32();
        for (let i = 0; i <= count; i++) this.label();
        return;
      }
      case 0x10:
      case 0x12:
        if (op === 0x12) m.features |= Feature.tailCall;
        this.index(m.funcTypes.length, 'function');
        return;
      case 0x11:
      case 0x13:
        if (op === 0x13) m.features |= Feature.tailCall;
        this.index(m.types.length, 'type');
        this.a = this.table();
        return;
      case 0x14:
      case 0x15:
        m.features |= Feature.functionReferences | (op === 0x15 ? Feature.tailCall : 0);
        this.index(m.types.length, 'type');
        return;
      case 0x18:
        if (frames[frames.length - 1] !== FrameKind.try) r.fail('delegate without a matching try', this.start);
        frames.pop();
        this.label();
        return;
      case 0x1c: {
        m.features |= Feature.referenceTypes;
        const at = r.pos;
        if (r.u32() !== 1) r.fail('invalid result arity of typed select', at);
        readValType(r, m);
        return;
      }
      case 0x1f: {
        m.features |= Feature.exnref;
        readBlockType(r, m);
        const count = r.u32();
        for (let i = 0; i < count; i++) {
          const at = r.pos;
          const kind = r.u8();
          if (kind > 3) r.fail(`malformed catch clause kind ${kind}`, at);
          if (kind < 2) this.index(m.tagCount, 'tag');
          this.label();
        }
        frames.push(FrameKind.tryTable);
        return;
      }
      case 0x20:
      case 0x21:
      case 0x22:
        this.index(this.localCount, 'local');
        return;
      case 0x23:
      case 0x24:
        this.index(m.globals.length, 'global');
        return;
      case 0x25:
      case 0x26:
        m.features |= Feature.referenceTypes;
        if (op === 0x26) m.mutatesTables = true;
        this.a = this.index(m.tables.length, 'table');
        return;
      case 0x3f:
      case 0x40:
        this.a = this.memory();
        return;
      case 0x41:
        r.s32();
        return;
      case 0x42:
        r.s64();
        return;
      case 0x43:
        r.skip(4);
        return;
      case 0x44:
        r.skip(8);
        return;
      case 0xd0:
        m.features |= Feature.referenceTypes;
        readHeapType(r, m);
        return;
      case 0xd1:
        m.features |= Feature.referenceTypes;
        return;
      case 0xd2:
        m.features |= Feature.referenceTypes;
        this.index(m.funcTypes.length, 'function');
        return;
      case 0xd3:
        r.fail('unsupported opcode 0xd3 (ref.eq, GC proposal)', this.start);
        return;
      case 0xd4:
        m.features |= Feature.functionReferences;
        return;
      case 0xd5:
      case 0xd6:
        m.features |= Feature.functionReferences;
        this.label();
        return;
      case 0xfb: {
        const sub = r.u32();
        const proposal = sub >= 0x80 ? 'stringref proposal' : 'GC proposal';
        r.fail(`unsupported opcode 0xfb ${hex(sub)} (${proposal})`, this.start);
        return;
      }
      case 0xfc:
        this.misc();
        return;
      case 0xfd:
        this.simd();
        return;
      case 0xfe:
        this.atomic();
        return;
      default:
        r.fail(`unknown opcode ${hex(op)}`, this.start);
    }
  }

  private misc(): void {
    const m = this.m;
    const sub = this.r.u32();
    this.sub = sub;
    if (sub <= 7) {
      m.features |= Feature.satFloatToInt;
      return;
    }
    m.features |= sub >= 15 && sub <= 17 ? Feature.referenceTypes : Feature.bulkMemory;
    if (sub >= 12 && sub !== 16) m.mutatesTables = true;
    switch (sub) {
      case 8:
        this.data();
        this.a = this.memory();
        return;
      case 9:
        this.data();
        m.dropsData = true;
        return;
      case 10:
        this.a = this.memory();
        this.b = this.memory();
        return;
      case 11:
        this.a = this.memory();
        return;
      case 12:
        this.index(m.elemCount, 'element segment');
        this.a = this.table();
        return;
      case 13:
        this.index(m.elemCount, 'element segment');
        return;
      case 14:
        this.a = this.table();
        this.b = this.table();
        return;
      case 15:
      case 16:
      case 17:
        this.a = this.table();
        return;
      default:
        this.r.fail(`unknown opcode 0xfc ${hex(sub)}`, this.start);
    }
  }

  private simd(): void {
    const r = this.r;
    const sub = r.u32();
    this.sub = sub;
    const kind = simdImmediate(sub);
    if (kind === SimdImm.invalid) r.fail(`unknown opcode 0xfd ${hex(sub)}`, this.start);
    this.m.features |= sub >= RELAXED_SIMD_FIRST ? Feature.relaxedSimd : Feature.simd;
    if (kind === SimdImm.memarg) this.memarg();
    else if (kind === SimdImm.memargLane) {
      this.memarg();
      r.skip(1);
    } else if (kind === SimdImm.lane) r.skip(1);
    else if (kind === SimdImm.v128 || kind === SimdImm.shuffle) r.skip(16);
  }

  private atomic(): void {
    const r = this.r;
    const sub = r.u32();
    this.sub = sub;
    this.m.features |= Feature.threads;
    if (sub === 0x03) {
      const at = r.pos;
      if (r.u8() !== 0) r.fail('malformed atomic.fence immediate', at);
      return;
    }
    if (sub <= 0x02 || (sub >= 0x10 && sub <= 0x4e)) {
      this.memarg();
      return;
    }
    r.fail(`unknown opcode 0xfe ${hex(sub)}`, this.start);
  }
}
