// Decoding of value, reference, heap and block types, including typed function references;
// GC and stringref types are refused here with the proposal named.

import { Feature } from './features.js';
import type { Reader } from './reader.js';
import type { ValType } from './types.js';

/** What type decoding needs from the module and where it records features. */
export interface TypeScope {
  typeCount: number;
  features: number;
}

const numeric = new Map<number, ValType>([
  [0x7f, 'i32'],
  [0x7e, 'i64'],
  [0x7d, 'f32'],
  [0x7c, 'f64'],
]);
const gcCodes = new Set([0x6e, 0x6d, 0x6c, 0x6b, 0x6a, 0x71, 0x72, 0x73, 0x74, 0x78, 0x77]);
const stringCodes = new Set([0x67, 0x66, 0x62, 0x61]);

function refuseCode(r: Reader, code: number, at: number, what: string): never {
  if (gcCodes.has(code)) r.fail(`unsupported ${what} 0x${code.toString(16)} (GC proposal)`, at);
  if (stringCodes.has(code)) r.fail(`unsupported ${what} 0x${code.toString(16)} (stringref proposal)`, at);
  r.fail(`malformed ${what} 0x${code.toString(16)}`, at);
}

/** A heap type: `func`, `extern`, `exn` or a type index. */
export function readHeapType(r: Reader, scope: TypeScope): string {
  const at = r.pos;
  const first = r.peek();
  if (first >= 0x40 && first < 0x80) {
    r.pos++;
    if (first === 0x70) return 'func';
    if (first === 0x6f) return 'extern';
    if (first === 0x69) {
      scope.features |= Feature.exnref;
      return 'exn';
    }
    refuseCode(r, first, at, 'heap type');
  }
  const index = r.s33();
  if (index < 0) r.fail('malformed heap type', at);
  if (index >= scope.typeCount) r.fail(`unknown type ${index}`, at);
  scope.features |= Feature.functionReferences;
  return String(index);
}

/** The rest of a reference type whose first byte (already read) is `code`. */
export function readRefTypeAfter(r: Reader, scope: TypeScope, code: number, at: number): ValType {
  if (code === 0x70) return 'funcref';
  if (code === 0x6f) {
    scope.features |= Feature.referenceTypes;
    return 'externref';
  }
  if (code === 0x69) {
    scope.features |= Feature.exnref;
    return 'exnref';
  }
  if (code === 0x63 || code === 0x64) {
    const nullable = code === 0x63;
    const heap = readHeapType(r, scope);
    scope.features |= Feature.functionReferences;
    if (nullable && heap === 'func') return 'funcref';
    if (nullable && heap === 'extern') return 'externref';
    if (nullable && heap === 'exn') return 'exnref';
    return nullable ? `(ref null ${heap})` : `(ref ${heap})`;
  }
  return refuseCode(r, code, at, 'reference type');
}

/** A reference type (table element types, typed select, element segments). */
export function readRefType(r: Reader, scope: TypeScope): ValType {
  const at = r.pos;
  return readRefTypeAfter(r, scope, r.u8(), at);
}

/** A value type; using funcref as a value (not only as a table element) is reference-types. */
export function readValType(r: Reader, scope: TypeScope): ValType {
  const at = r.pos;
  const code = r.u8();
  const num = numeric.get(code);
  if (num) return num;
  if (code === 0x7b) {
    scope.features |= Feature.simd;
    return 'v128';
  }
  if (code === 0x70) scope.features |= Feature.referenceTypes;
  if (code === 0x70 || code === 0x6f || code === 0x69 || code === 0x63 || code === 0x64) {
    return readRefTypeAfter(r, scope, code, at);
  }
  return refuseCode(r, code, at, 'value type');
}

/**
 * A block type: empty, one value type, or (multi-value) a type index as a signed 33-bit LEB.
 * Returns the type index, or -1 for the inline forms.
 */
export function readBlockType(r: Reader, scope: TypeScope): number {
  const first = r.peek();
  if (first === 0x40) {
    r.pos++;
    return -1;
  }
  if (first >= 0x40 && first < 0x80) {
    readValType(r, scope);
    return -1;
  }
  const at = r.pos;
  const index = r.s33();
  if (index < 0 || index >= scope.typeCount) r.fail(`unknown type ${index} in block type`, at);
  scope.features |= Feature.multiValue;
  return index;
}
