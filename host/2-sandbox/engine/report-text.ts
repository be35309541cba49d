// Guest text quoted in a fault report (a preview of output that is not JSON, a plugin's error
// text, a parser's message about it) must itself be Unicode text: a cut through a surrogate pair,
// or V8's own quoting of the text, must not put a lone surrogate into a response or a run record
// (ABI-JSON-004, ABI-JSON-007: a report is itself within the bounds).

const toWellFormed = (s: string): string => (s as unknown as { toWellFormed(): string }).toWellFormed();

/** `text` with every lone surrogate written as U+FFFD. */
export function wellFormed(text: string): string {
  return toWellFormed(text);
}

/** The longest prefix of `text` of at most `maxBytes` bytes of UTF-8 that cuts no character; lone surrogates as U+FFFD. */
export function utf8Prefix(text: string, maxBytes: number): string {
  // Every code unit is at least one byte, so no more than maxBytes + 1 of them can matter.
  const s = toWellFormed(text.slice(0, maxBytes + 1));
  let bytes = 0;
  let end = 0;
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
    if (bytes + n > maxBytes) break;
    bytes += n;
    end += ch.length;
  }
  return s.slice(0, end);
}
