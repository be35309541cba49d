// Readers for the non-code sections (types, imports, tables, memories, tags, globals, exports,
// start, elements, data) and constant expressions; each fills the ParsedModule and checks the
// indices it can check cheaply, so later stages can trust them.

import { Feature } from './features.js';
import { readCount } from './module-bounds.js';
import type { ParsedModule } from './parsed-module.js';
import type { Reader } from './reader.js';
import type { ExternKind, FuncType } from './types.js';
import { readHeapType, readRefType, readValType } from './value-types.js';

const gcTypeForms = new Map<number, string>([
  [0x4e, 'rec'],
  [0x50, 'sub'],
  [0x4f, 'sub final'],
  [0x5e, 'array'],
  [0x5f, 'struct'],
]);

/** The type section: function types only; GC type forms are refused. */
export function readTypeSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'types');
  m.typeCount = count;
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const form = r.u8();
    if (form !== 0x60) {
      const gc = gcTypeForms.get(form);
      if (gc) r.fail(`unsupported type form 0x${form.toString(16)} (${gc}, GC proposal)`, at);
      r.fail(`malformed type form 0x${form.toString(16)}`, at);
    }
    const params = readVec(r, () => readValType(r, m));
    const results = readVec(r, () => readValType(r, m));
    if (results.length > 1) m.features |= Feature.multiValue;
    m.types.push({ params, results });
  }
}

function readVec<T>(r: Reader, item: () => T): T[] {
  const count = r.u32();
  const out: T[] = [];
  for (let i = 0; i < count; i++) out.push(item());
  return out;
}

function typeIndex(r: Reader, m: ParsedModule): number {
  const at = r.pos;
  const index = r.u32();
  if (index >= m.types.length) r.fail(`unknown type ${index}`, at);
  return index;
}

/** Memory or table limits; sizes are u64 for memory64 and table64. */
function readLimits(r: Reader, m: ParsedModule, memory: boolean) {
  const start = r.pos;
  const flags = r.u8();
  if (memory && flags & 0x08) r.fail('unsupported limits flag 0x08 (custom-page-sizes proposal)', start);
  if (!memory && flags & 0x02) r.fail('unsupported shared table (shared-everything-threads proposal)', start);
  if (flags & ~0x07) r.fail(`malformed limits flags 0x${flags.toString(16)}`, start);
  const is64 = (flags & 0x04) !== 0;
  const shared = (flags & 0x02) !== 0;
  const initial = is64 ? r.u64() : r.u32();
  const maximum = flags & 0x01 ? (is64 ? r.u64() : r.u32()) : null;
  if (is64) m.features |= Feature.memory64;
  if (shared) {
    m.features |= Feature.threads;
    if (maximum === null) r.fail('shared memory must have a maximum', start);
  }
  return { initial, maximum, shared, is64, start, end: r.pos };
}

function readTableType(r: Reader, m: ParsedModule, imported: boolean): void {
  const refType = readRefType(r, m);
  const l = readLimits(r, m, false);
  m.tables.push({ refType, initial: l.initial, maximum: l.maximum, is64: l.is64, imported, limitsStart: l.start, limitsEnd: l.end });
  if (m.tables.length > 1) m.features |= Feature.referenceTypes;
}

function readMemoryType(r: Reader, m: ParsedModule, imported: boolean): void {
  const l = readLimits(r, m, true);
  m.memories.push({
    initial: l.initial,
    maximum: l.maximum,
    shared: l.shared,
    memory64: l.is64,
    imported,
    limitsStart: l.start,
    limitsEnd: l.end,
  });
  if (m.memories.length > 1) m.features |= Feature.multiMemory;
}

function readGlobalType(r: Reader, m: ParsedModule, imported: boolean): void {
  const type = readValType(r, m);
  const at = r.pos;
  const mut = r.u8();
  if (mut > 1) r.fail(`malformed mutability 0x${mut.toString(16)}`, at);
  m.globals.push({ type, mutable: mut === 1, imported });
}

function readTagType(r: Reader, m: ParsedModule): void {
  const at = r.pos;
  if (r.u8() !== 0) r.fail('malformed tag attribute', at);
  typeIndex(r, m);
  m.tagCount++;
  m.features |= Feature.exceptions;
}

const kinds: ExternKind[] = ['func', 'table', 'memory', 'global', 'tag'];

/** The import section. */
export function readImportSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'imports');
  for (let i = 0; i < count; i++) {
    const module = r.name();
    const name = r.name();
    const at = r.pos;
    const kind = kinds[r.u8()];
    if (!kind) r.fail('malformed import kind', at);
    let type: FuncType | undefined;
    if (kind === 'func') {
      const index = typeIndex(r, m);
      m.funcTypes.push(index);
      m.importedFuncs++;
      type = m.types[index];
    } else if (kind === 'table') readTableType(r, m, true);
    else if (kind === 'memory') readMemoryType(r, m, true);
    else if (kind === 'global') readGlobalType(r, m, true);
    else readTagType(r, m);
    m.imports.push(type ? { module, name, kind, type } : { module, name, kind });
  }
}

/** The function section: one type index per defined function. */
export function readFunctionSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'functions', m.funcTypes.length);
  for (let i = 0; i < count; i++) m.funcTypes.push(typeIndex(r, m));
}

/** The table section, including tables with an initializer (function-references). */
export function readTableSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'tables', m.tables.length);
  for (let i = 0; i < count; i++) {
    if (r.peek() === 0x40) {
      r.pos++;
      const at = r.pos;
      if (r.u8() !== 0) r.fail('malformed table type', at);
      readTableType(r, m, false);
      readConstExpr(r, m);
      m.features |= Feature.functionReferences;
    } else {
      readTableType(r, m, false);
    }
  }
}

/** The memory section. */
export function readMemorySection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'memories', m.memories.length);
  for (let i = 0; i < count; i++) readMemoryType(r, m, false);
}

/** The tag section (exception handling). */
export function readTagSection(r: Reader, m: ParsedModule): void {
  const count = r.u32();
  for (let i = 0; i < count; i++) readTagType(r, m);
}

/** The global section. */
export function readGlobalSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'globals', m.globals.length);
  for (let i = 0; i < count; i++) {
    readGlobalType(r, m, false);
    readConstExpr(r, m);
  }
}

/** The export section; names must be unique and indices in range. */
export function readExportSection(r: Reader, m: ParsedModule): void {
  const count = readCount(r, 'exports');
  const seen = new Set<string>();
  for (let i = 0; i < count; i++) {
    const offset = r.pos;
    const name = r.name();
    if (seen.has(name)) r.fail(`duplicate export name "${name}"`, offset);
    seen.add(name);
    const at = r.pos;
    const kind = kinds[r.u8()];
    if (!kind) r.fail('malformed export kind', at);
    const indexAt = r.pos;
    const index = r.u32();
    const limit = {
      func: m.funcTypes.length,
      table: m.tables.length,
      memory: m.memories.length,
      global: m.globals.length,
      tag: m.tagCount,
    }[kind];
    if (index >= limit) r.fail(`unknown ${kind} ${index} in export "${name}"`, indexAt);
    if (kind === 'func') m.exports.push({ name, kind, index, type: m.types[m.funcTypes[index]!]!, offset });
    else if (kind === 'global') m.exports.push({ name, kind, index, mutable: m.globals[index]!.mutable, offset });
    else m.exports.push({ name, kind, index, offset });
  }
}

/** The start section. */
export function readStartSection(r: Reader, m: ParsedModule): void {
  const at = r.pos;
  const index = r.u32();
  if (index >= m.funcTypes.length) r.fail(`unknown function ${index} as start`, at);
  m.start = index;
}

function funcIndex(r: Reader, m: ParsedModule): void {
  const at = r.pos;
  const index = r.u32();
  if (index >= m.funcTypes.length) r.fail(`unknown function ${index}`, at);
}

function tableIndex(r: Reader, m: ParsedModule): void {
  const at = r.pos;
  const index = r.u32();
  if (index >= m.tables.length) r.fail(`unknown table ${index}`, at);
}

/** The element section, all eight segment forms. */
export function readElementSection(r: Reader, m: ParsedModule): void {
  const count = r.u32();
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const flags = r.u32();
    if (flags > 7) r.fail(`malformed element segment flags ${flags}`, at);
    if (flags !== 0 && flags !== 4) m.features |= Feature.bulkMemory;
    if (flags >= 4) m.features |= Feature.referenceTypes;
    const active = (flags & 1) === 0;
    if (flags & 2 && active) tableIndex(r, m);
    if (active) readConstExpr(r, m);
    if (flags & 3) {
      if (flags & 4) readRefType(r, m);
      else if (r.u8() !== 0) r.fail('malformed element kind', r.pos - 1);
    }
    const items = r.u32();
    for (let j = 0; j < items; j++) {
      if (flags & 4) readConstExpr(r, m);
      else funcIndex(r, m);
    }
    m.elemCount++;
  }
}

/** The data count section (bulk memory). */
export function readDataCountSection(r: Reader, m: ParsedModule): void {
  m.dataCount = r.u32();
  m.features |= Feature.bulkMemory;
}

/** The data section: active segments for any memory, and passive ones. */
export function readDataSection(r: Reader, m: ParsedModule): void {
  const countAt = r.pos;
  const count = r.u32();
  if (m.dataCount !== null && m.dataCount !== count) {
    r.fail(`data count mismatch: data count section says ${m.dataCount}, data section has ${count}`, countAt);
  }
  for (let i = 0; i < count; i++) {
    const at = r.pos;
    const flags = r.u32();
    if (flags > 2) r.fail(`malformed data segment flags ${flags}`, at);
    if (flags === 1) m.features |= Feature.bulkMemory;
    else {
      const memAt = r.pos;
      const memory = flags === 2 ? r.u32() : 0;
      if (memory >= m.memories.length) r.fail(`unknown memory ${memory}`, memAt);
      if (memory !== 0) m.features |= Feature.multiMemory;
      readConstExpr(r, m);
    }
    r.skip(r.u32());
    m.dataSegments++;
  }
}

const extendedConst = new Set([0x6a, 0x6b, 0x6c, 0x7c, 0x7d, 0x7e]);

/**
 * A constant expression up to its `end`. Only constant instructions are accepted; their
 * operand and result types are left to the engine's validator.
 */
export function readConstExpr(r: Reader, m: ParsedModule): void {
  for (;;) {
    const at = r.pos;
    const op = r.u8();
    if (op === 0x0b) return;
    if (op === 0x41) r.s32();
    else if (op === 0x42) r.s64();
    else if (op === 0x43) r.skip(4);
    else if (op === 0x44) r.skip(8);
    else if (op === 0x23) {
      const index = r.u32();
      if (index >= m.globals.length) r.fail(`unknown global ${index}`, at + 1);
    } else if (op === 0xd0) {
      readHeapType(r, m);
      m.features |= Feature.referenceTypes;
    } else if (op === 0xd2) {
      funcIndex(r, m);
      m.features |= Feature.referenceTypes;
    } else if (extendedConst.has(op)) m.features |= Feature.extendedConst;
    else if (op === 0xfd && r.u32() === 12) {
      r.skip(16);
      m.features |= Feature.simd;
    } else r.fail(`constant expression required, found opcode 0x${op.toString(16)}`, at);
  }
}
