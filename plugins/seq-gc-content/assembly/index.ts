// seq.gc_content: counts G/C, A/T/U, N and other IUPAC codes in an inline DNA/RNA sequence
// and reports the GC fraction. Pure: the output depends only on the input.

import { ErrorCode, JSONObject, Result, run } from "@helix/sdk-as";
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

// Character classes. Codes are indexes into COUNTS; 0 marks a character that is not allowed.
const INVALID: u8 = 0;
const GC: u8 = 1;
const AT: u8 = 2;
const N: u8 = 3;
const OTHER: u8 = 4;
const SPACE: u8 = 5;

// Class of each ASCII code, and one i64 counter per class: static memory keeps the hot loop
// to a table load and a counter increment per character, with no branches on the class.
const CLASSES: usize = memory.data(128);
const COUNTS: usize = memory.data(6 * 8, 8);

const HINT = "use IUPAC nucleotide codes (A C G T U R Y S W K M B D H V N, any case); whitespace is ignored";

function assign(characters: string, kind: u8): void {
  for (let i = 0; i < characters.length; i++) store<u8>(CLASSES + <usize>characters.charCodeAt(i), kind);
}

// Rebuilt on every call: cheap, and no state survives between calls anyway.
function prepare(): void {
  memory.fill(CLASSES, INVALID, 128);
  memory.fill(COUNTS, 0, 6 * 8);
  assign("GCgc", GC);
  assign("ATUatu", AT);
  assign("Nn", N);
  // The two- and three-way ambiguity codes.
  assign("RYSWKMBDHVryswkmbdhv", OTHER);
  assign(" \t\n\r\v\f", SPACE);
}

@inline function count(kind: u8): i64 {
  return load<i64>(COUNTS + (<usize>kind << 3));
}

function handle(input: JSONObject): Result {
  const sequence = input.getString("sequence");
  if (sequence === null) {
    return Result.error(ErrorCode.INVALID_INPUT, "sequence is required and must be a string", HINT);
  }
  const ignoreN = input.getBool("ignore_n", true);
  prepare();
  const base = changetype<usize>(sequence);
  const units = sequence.length;
  for (let i = 0; i < units; i++) {
    const unit = <u32>load<u16>(base + (<usize>i << 1));
    const kind = unit < 0x80 ? load<u8>(CLASSES + <usize>unit) : INVALID;
    // The first character that is not ASCII stops the scan, so up to here units and
    // characters coincide and `i` is also the character index.
    if (kind == INVALID) return invalidCharacter(sequence, i);
    const counter = COUNTS + (<usize>kind << 3);
    store<i64>(counter, load<i64>(counter) + 1);
  }
  const gc = count(GC);
  const at = count(AT);
  const length = gc + at + count(N) + count(OTHER);
  const denominator = ignoreN ? gc + at : length;
  const out = new JSONObject()
    .setInteger("length", length)
    .setInteger("gc_count", gc)
    .setInteger("at_count", at)
    .setInteger("n_count", count(N))
    .setInteger("other_count", count(OTHER))
    .setNumber("gc_fraction", denominator == 0 ? 0.0 : <f64>gc / <f64>denominator);
  return Result.ok(out);
}

function invalidCharacter(sequence: string, index: i32): Result {
  // A character outside the BMP is two UTF-16 units; report it whole.
  const first = sequence.charCodeAt(index);
  const pair = first >= 0xd800 && first < 0xdc00 && index + 1 < sequence.length;
  const character = sequence.substring(index, index + (pair ? 2 : 1));
  const details = new JSONObject().setString("character", character).setInteger("index", index);
  const message = "sequence has an invalid character " + quoteForMessage(character) + " at index " + index.toString();
  return Result.error(ErrorCode.INVALID_INPUT, message, HINT, details);
}

// Control characters are shown as U+XXXX so the message stays readable.
function quoteForMessage(character: string): string {
  const unit = <u32>character.charCodeAt(0);
  if (unit >= 0x20 && unit != 0x7f) return "'" + character + "'";
  const digits = "0123456789ABCDEF";
  return "U+00" + digits.charAt((unit >> 4) & 0xf) + digits.charAt(unit & 0xf);
}
