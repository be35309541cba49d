// Reads a whole module: header, sections in their required order, and every function body,
// into a ParsedModule. Custom sections are skipped; anything malformed or unsupported throws a
// WasmDecodeError with the offset where it was found.

import { BodyDecoder } from './body-decoder.js';
import { emptyModule, type ParsedModule } from './parsed-module.js';
import { Reader } from './reader.js';
import {
  readDataCountSection,
  readDataSection,
  readElementSection,
  readExportSection,
  readFunctionSection,
  readGlobalSection,
  readImportSection,
  readMemorySection,
  readStartSection,
  readTableSection,
  readTagSection,
  readTypeSection,
} from './sections.js';

/** Section ids. */
export const SectionId = {
  custom: 0,
  type: 1,
  import: 2,
  function: 3,
  table: 4,
  memory: 5,
  global: 6,
  export: 7,
  start: 8,
  element: 9,
  code: 10,
  data: 11,
  dataCount: 12,
  tag: 13,
} as const;

/** Where each known section must come, by id: the tag section sits between memory and global. */
export const sectionRank: Record<number, number> = {
  1: 1,
  2: 2,
  3: 3,
  4: 4,
  5: 5,
  13: 6,
  6: 7,
  7: 8,
  8: 9,
  9: 10,
  12: 11,
  10: 12,
  11: 13,
};

const sectionNames: Record<number, string> = {
  1: 'type',
  2: 'import',
  3: 'function',
  4: 'table',
  5: 'memory',
  6: 'global',
  7: 'export',
  8: 'start',
  9: 'element',
  10: 'code',
  11: 'data',
  12: 'data count',
  13: 'tag',
};

const readers: Record<number, (r: Reader, m: ParsedModule) => void> = {
  1: readTypeSection,
  2: readImportSection,
  3: readFunctionSection,
  4: readTableSection,
  5: readMemorySection,
  6: readGlobalSection,
  7: readExportSection,
  8: readStartSection,
  9: readElementSection,
  10: readCodeSection,
  11: readDataSection,
  12: readDataCountSection,
  13: readTagSection,
};

/** Parses and fully decodes `bytes`. */
export function parseModule(bytes: Uint8Array): ParsedModule {
  const r: Reader = new Reader(bytes, 0, bytes.length);
  if (bytes.length < 4 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    r.fail('magic header not detected (not a WebAssembly module)', 0);
  }
  if (bytes.length < 8) r.fail('unexpected end in the version field', bytes.length);
  if (bytes[4] !== 1 || bytes[5] !== 0 || bytes[6] !== 0 || bytes[7] !== 0) {
    const component = bytes[6] === 1 && bytes[7] === 0;
    r.fail(component ? 'unsupported component model binary (component-model proposal)' : 'unknown binary version', 4);
  }
  r.pos = 8;
  const m = emptyModule(bytes);
  let lastRank = 0;
  let sawCode = false;
  let sawData = false;
  while (!r.done) {
    const start = r.pos;
    const id = r.u8();
    const size = r.u32();
    const contentStart = r.pos;
    if (size > bytes.length - contentStart) r.fail(`section size ${size} runs past the end of the module`, start);
    const end = contentStart + size;
    m.sections.push({ id, start, contentStart, end });
    const section = new Reader(bytes, contentStart, end);
    if (id === SectionId.custom) {
      section.name();
      r.pos = end;
      continue;
    }
    const rank = sectionRank[id];
    if (rank === undefined) r.fail(`unknown section id ${id}`, start);
    if (rank === lastRank) r.fail(`duplicate ${sectionNames[id]} section`, start);
    if (rank < lastRank) r.fail(`${sectionNames[id]} section out of order`, start);
    lastRank = rank;
    readers[id]!(section, m);
    if (section.pos !== end) r.fail(`${sectionNames[id]} section size mismatch`, section.pos);
    if (id === SectionId.code) sawCode = true;
    if (id === SectionId.data) sawData = true;
    r.pos = end;
  }
  if (!sawCode && m.funcTypes.length > m.importedFuncs) {
    r.fail('function and code section have inconsistent lengths (no code section)', bytes.length);
  }
  if (!sawData && m.dataCount !== null && m.dataCount !== 0) {
    r.fail(`data count mismatch: data count section says ${m.dataCount}, there is no data section`, bytes.length);
  }
  return m;
}

function readCodeSection(r: Reader, m: ParsedModule): void {
  const at = r.pos;
  const count = r.u32();
  const defined = m.funcTypes.length - m.importedFuncs;
  if (count !== defined) {
    r.fail(`function and code section have inconsistent lengths (${defined} functions, ${count} bodies)`, at);
  }
  for (let i = 0; i < count; i++) {
    const sizeStart = r.pos;
    const size = r.u32();
    const start = r.pos;
    if (size > r.end - start) r.fail(`function body ${i} runs past the end of the code section`, sizeStart);
    const span = { sizeStart, start, end: start + size };
    const type = m.types[m.funcTypes[m.importedFuncs + i]!]!;
    const decoder = new BodyDecoder(m, span, type.params.length);
    decoder.readLocals();
    while (!decoder.finished) decoder.next();
    m.bodies.push(span);
    r.pos = span.end;
  }
}
