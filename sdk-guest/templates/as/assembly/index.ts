// __ID__: the reverse complement and GC count of a DNA sequence given inline. Made by
// `helix new` from the AssemblyScript template: replace `handle` with your tool's work.

import { CodeUnitBuffer, ErrorCode, JSONObject, Log, Result, run } from "@helix/sdk-as";
// Required: exports the ABI functions and loads the SDK's abort handler.
export { alloc, dealloc, helix_panic } from "@helix/sdk-as";

/** helix/v1 entry point: `run` reads the input, calls `handle` and writes the envelope. */
export function execute(ptr: i32, len: i32): i64 {
  return run(ptr, len, handle);
}

const HINT = "use the DNA codes A, C, G, T and N, in any case";

// The host has already checked the input against schemas/input.json, so `sequence` is a
// string; what a schema cannot say well (which character is wrong, and where) is checked here.
function handle(input: JSONObject): Result {
  const sequence = input.getString("sequence");
  if (sequence === null) return Result.error(ErrorCode.INVALID_INPUT, "sequence is required and must be a string", HINT);

  let gc = 0;
  for (let i = 0; i < sequence.length; i++) {
    const base = sequence.charCodeAt(i);
    if (complementOf(base) == 0) return invalidCharacter(sequence, i);
    if (base == 0x43 || base == 0x47 || base == 0x63 || base == 0x67) gc++; // C G c g
  }
  // A buffer, not `out += ...`: concatenating in a loop copies the string every time.
  const out = new CodeUnitBuffer(sequence.length);
  for (let i = sequence.length - 1; i >= 0; i--) out.push(<u32>complementOf(sequence.charCodeAt(i)));

  // A capability call: listed in the manifest's capabilities.allow, granted by the policy.
  // The line lands in the run's log; a failed log is not fatal, so its status is ignored.
  Log.info("sequence.done", new JSONObject().setInteger("length", sequence.length).setInteger("gc_count", gc));

  return Result.ok(
    new JSONObject()
      .setString("reverse_complement", out.toString())
      .setInteger("length", sequence.length)
      .setInteger("gc_count", gc),
  );
}

// The complementary code unit, keeping case; 0 for a character that is not a DNA code.
function complementOf(base: i32): i32 {
  switch (base) {
    case 0x41: return 0x54; // A -> T
    case 0x54: return 0x41; // T -> A
    case 0x43: return 0x47; // C -> G
    case 0x47: return 0x43; // G -> C
    case 0x4e: return 0x4e; // N
    case 0x61: return 0x74; // a -> t
    case 0x74: return 0x61; // t -> a
    case 0x63: return 0x67; // c -> g
    case 0x67: return 0x63; // g -> c
    case 0x6e: return 0x6e; // n
    default: return 0;
  }
}

// An error result with a taxonomy code, a message saying what and where, a hint saying how to
// fix it, and details a program can read.
function invalidCharacter(sequence: string, index: i32): Result {
  const character = sequence.charAt(index);
  const details = new JSONObject().setString("character", character).setInteger("index", index);
  const message = "sequence has an invalid character '" + character + "' at index " + index.toString();
  return Result.error(ErrorCode.INVALID_INPUT, message, HINT, details);
}
