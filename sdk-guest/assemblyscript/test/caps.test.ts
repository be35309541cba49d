// The SDK's typed capability wrappers (Clock, Log, Kv, Artifact, ArtifactReader, ArtifactWriter,
// Http, Secrets, Base64) against the simulated broker in host-sim.ts.

import { beforeAll, describe, expect, it } from 'vitest';
import { callTool, compileProgram, okOutput } from './harness.js';
import { httpRequest } from '../../../capabilities/http.js';
import { HostSim, type HostSimOptions, on, SimError } from './host-sim.js';

let module: WebAssembly.Module;

beforeAll(async () => {
  module = await compileProgram('test/assembly/caps-probe.ts');
}, 120_000);

/**
 * What caps-probe answers, as these tests read it: each mode fills its own fields (a failed
 * capability call its code, message, hint and details), and a test reads those of the mode it ran.
 */
interface ProbeAnswer {
  ok: boolean;
  code: string;
  message: string;
  hint: string;
  results: Array<{ ok: boolean; code?: string; details: { violations: string[] } }>;
  put: unknown;
  size: number;
  sha256: string;
  ids: string[];
  lines: string[];
  other_lines: string[];
  line_number: number;
  done: boolean;
  parts: Array<[string, boolean]>;
  pieces: number;
  pieces_text: string[];
  pieces_sent: number;
  eof: boolean;
  artifact_id: string;
  decoded: string | null;
}

/** Runs one probe call against `sim` (a fresh instance each time). */
async function probe(sim: HostSim, input: Record<string, unknown>): Promise<ProbeAnswer> {
  return okOutput<ProbeAnswer>(callTool(await sim.instantiate(module), input));
}

/** The lines a reader should return: LF or CR LF ends a line, a CR at the very end too. */
function referenceLines(text: string): string[] {
  if (text.length === 0) return [];
  const lines = text.split('\n').map((line) => (line.endsWith('\r') ? line.slice(0, -1) : line));
  if (text.endsWith('\n')) lines.pop();
  return lines;
}

/** Lines from [part, endsLine] pairs, and what is left of an unfinished line. */
function joinParts(parts: Array<[string, boolean]>): { lines: string[]; current: string } {
  const lines: string[] = [];
  let current = '';
  for (const [part, ends] of parts) {
    current += part;
    if (ends) {
      lines.push(current);
      current = '';
    }
  }
  return { lines, current };
}

const FORBIDDEN = { ok: false, code: 'A-AUTH-FORBIDDEN', message: 'forbidden' };

describe('a module using the wrappers', () => {
  it('imports helix_v1.capability_call, and capability_call_bulk for the streaming reader and writer', () => {
    expect(WebAssembly.Module.imports(module)).toEqual([
      { module: 'helix_v1', name: 'capability_call', kind: 'function' },
      { module: 'helix_v1', name: 'capability_call_bulk', kind: 'function' },
    ]);
  });
});

describe('Clock', () => {
  it('now returns the host time in ms and s, and nowUnixMs the ms', async () => {
    const sim = new HostSim({ nowMs: 1_712_345_678_901 });
    expect(await probe(sim, { mode: 'clock' })).toEqual({
      ok: true,
      unix_ms: 1_712_345_678_901,
      unix_s: 1_712_345_678,
      now_ms: 1_712_345_678_901,
    });
    expect(sim.requests).toEqual([
      { name: 'clock.now_unix', args: {} },
      { name: 'clock.now_unix', args: {} },
    ]);
  });

  it('now reports forbidden when clock is not allowed, and nowUnixMs returns -1', async () => {
    const out = await probe(new HostSim({ allow: [] }), { mode: 'clock' });
    expect(out).toMatchObject({ ...FORBIDDEN, now_ms: -1, unix_ms: 0 });
    expect(out.hint).toMatch(/capabilities\.allow/);
  });
});

describe('Log', () => {
  it('emits each level with its event and fields', async () => {
    const sim = new HostSim();
    const out = await probe(sim, { mode: 'log', event: 'probe.error', fields: { n: 3, tag: 'é' } });
    expect(out.results).toEqual([{ ok: true }, { ok: true }, { ok: true }, { ok: true }]);
    expect(sim.logs).toEqual([
      { level: 'debug', event: 'probe.debug', fields: {} },
      { level: 'info', event: 'probe.info', fields: { n: 3, tag: 'é' } },
      { level: 'warn', event: 'probe.warn', fields: { n: 3, tag: 'é' } },
      { level: 'error', event: 'probe.error', fields: { n: 3, tag: 'é' } },
    ]);
  });

  it('returns the I-REQ-CAPABILITY-ARGS error for an event name the host refuses, without aborting', async () => {
    const sim = new HostSim();
    const out = await probe(sim, { mode: 'log', event: 'bad event!' });
    expect(out.results.slice(0, 3)).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
    expect(out.results[3]).toMatchObject({ ok: false, code: 'I-REQ-CAPABILITY-ARGS' });
    expect(out.results[3]?.details.violations[0]).toMatch(/^event: /);
    expect(sim.logs).toHaveLength(3);
  });
});

describe('Kv', () => {
  it('get is null for an absent key; put, get, list and delete round-trip a JSON value', async () => {
    const sim = new HostSim();
    sim.kv.set('other', 1);
    const value = { runs: 2, names: ['a', 'é😀'], nested: { x: null, f: 1.5 } };
    const out = await probe(sim, { mode: 'kv', key: 'stats', value, prefix: 'st' });
    expect(out).toEqual({
      absent_before: true,
      put: { ok: true },
      after: { ok: true, value, is_object: true },
      list: { ok: true, keys: ['stats'] },
      delete: { ok: true, deleted: true },
      deleted_again: false,
      absent_at_end: true,
    });
    expect(sim.kv.has('stats')).toBe(false);
  });

  it('get returns a failed value, not null, when the call is refused', async () => {
    const out = await probe(new HostSim({ allow: ['kv.put'] }), { mode: 'kv', key: 'k', value: 1 });
    expect(out).toMatchObject({
      absent_before: false,
      ...FORBIDDEN,
      put: { ok: true },
      after: FORBIDDEN,
      list: FORBIDDEN,
      delete: { ...FORBIDDEN, deleted: false },
    });
  });

  it('put reports the host refusing an empty key', async () => {
    const out = await probe(new HostSim(), { mode: 'kv', key: '', value: 1 });
    expect(out.put).toMatchObject({ ok: false, code: 'I-REQ-CAPABILITY-ARGS' });
  });
});

describe('Artifact.stat and Artifact.list', () => {
  it('stat returns the metadata, with compression and label', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact('>a\nACGT\n', { type: 'fasta', label: 'reads', gzip: true });
    const out = await probe(sim, { mode: 'stat', id });
    expect(out).toMatchObject({
      ok: true,
      id,
      type: 'fasta',
      compression: 'gzip',
      is_gzip: true,
      label: 'reads',
      media_type: 'application/gzip',
    });
    expect(out.size).toBe(sim.artifacts.get(id)!.bytes.length);
    expect(out.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('stat of an unknown id is P-PRECOND-ARTIFACT-NOT-FOUND, of a malformed id I-REQ-CAPABILITY-ARGS', async () => {
    const sim = new HostSim();
    expect(await probe(sim, { mode: 'stat', id: 'art_00000000000000000000000ZZZ' })).toMatchObject({
      ok: false,
      code: 'P-PRECOND-ARTIFACT-NOT-FOUND',
      label: null,
    });
    expect(await probe(sim, { mode: 'stat', id: 'nope' })).toMatchObject({ ok: false, code: 'I-REQ-CAPABILITY-ARGS' });
  });

  it('list returns ids in order, filtered by type', async () => {
    const sim = new HostSim();
    const a = sim.addArtifact('x', { type: 'fasta' });
    sim.addArtifact('y', { type: 'text' });
    const c = sim.addArtifact('z', { type: 'fasta' });
    expect(await probe(sim, { mode: 'list', type: 'fasta' })).toEqual({ ok: true, ids: [a, c] });
    expect((await probe(sim, { mode: 'list', limit: 2 })).ids).toHaveLength(2);
  });
});

describe('ArtifactReader', () => {
  const tricky = 'é\r\nline two 😀 中文\r\n\r\nbare\rcr\n\u0001"quote" \\ \ttab\n\nlast line without newline ü';

  it('nextLine returns the same lines for every piece size, across CR LF and multi-byte splits', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact(tricky);
    const expected = referenceLines(tricky);
    for (let pieceLength = 4; pieceLength <= 24; pieceLength++) {
      const out = await probe(sim, { mode: 'lines', id, piece_length: pieceLength });
      expect({ pieceLength, lines: out.lines, ok: out.ok }).toEqual({ pieceLength, lines: expected, ok: true });
      expect(out.line_number).toBe(expected.length);
      expect(out.done).toBe(true);
    }
  });

  it('nextLine handles a CR LF split exactly at a piece boundary, and many random texts', async () => {
    const sim = new HostSim();
    // Piece length 8: "ACGTACG\r" is the first piece, "\n..." the second.
    const id = sim.addArtifact('ACGTACG\r\nTT\r\n');
    expect((await probe(sim, { mode: 'lines', id, piece_length: 8 })).lines).toEqual(['ACGTACG', 'TT']);
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const alphabet = ['A', 'c', '\n', '\r\n', '\r', 'é', '😀', '中', ' ', ''];
    for (let round = 0; round < 30; round++) {
      const text = Array.from({ length: rand(60) }, () => alphabet[rand(alphabet.length)]).join('');
      const textId = sim.addArtifact(text);
      const pieceLength = 4 + rand(9);
      const out = await probe(sim, { mode: 'lines', id: textId, piece_length: pieceLength });
      expect({ text, pieceLength, lines: out.lines }).toEqual({ text, pieceLength, lines: referenceLines(text) });
    }
  });

  it('nextLinePart ends every line with exactly one part marked as its end', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact(tricky);
    const out = await probe(sim, { mode: 'parts', id, piece_length: 5 });
    const { lines, current } = joinParts(out.parts);
    expect(current).toBe('');
    expect(lines).toEqual(referenceLines(tricky));
    expect(out.parts.length).toBeGreaterThan(lines.length);
  });

  it('nextLinePartBytes hands out the same parts as bytes in the piece, without strings', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact(tricky);
    for (const pieceLength of [4, 9, 1 << 20]) {
      const asStrings = await probe(sim, { mode: 'parts', id, piece_length: pieceLength });
      const asBytes = await probe(sim, { mode: 'part_bytes', id, piece_length: pieceLength });
      expect(asBytes.parts).toEqual(asStrings.parts);
      expect(asBytes).toMatchObject({ ok: true, done: true, line_number: referenceLines(tricky).length });
    }
  });

  it('reads no line from an empty artifact and one empty line from a lone newline', async () => {
    const sim = new HostSim();
    expect(await probe(sim, { mode: 'lines', id: sim.addArtifact('') })).toMatchObject({ ok: true, lines: [], done: true });
    expect((await probe(sim, { mode: 'lines', id: sim.addArtifact('\n') })).lines).toEqual(['']);
    expect((await probe(sim, { mode: 'lines', id: sim.addArtifact('\r') })).lines).toEqual(['']);
  });

  it('reads the gunzipped text of a gzip artifact with decompress', async () => {
    const sim = new HostSim();
    const text = Array.from({ length: 200 }, (_, i) => `line ${i} ${'x'.repeat(i % 17)}`).join('\r\n');
    const id = sim.addArtifact(text, { gzip: true });
    const out = await probe(sim, { mode: 'lines', id, decompress: true, piece_length: 1000 });
    expect(out.lines).toEqual(referenceLines(text));
    expect(out.pieces).toBeGreaterThan(1);
  });

  it('fails with I-REQ-TOO-LARGE, naming the line, when a line exceeds maxLineLength', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact(`short\n${'y'.repeat(50)}\nafter\n`);
    const out = await probe(sim, { mode: 'lines', id, piece_length: 16, max_line_length: 20 });
    expect(out).toMatchObject({ ok: false, code: 'I-REQ-TOO-LARGE', lines: ['short'], details: { line: 2, max_line_length: 20 } });
  });

  it('stops with the host error when a read fails, keeping what it returned before', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact('a\nb\nc\n');
    expect(await probe(sim, { mode: 'lines', id: 'art_00000000000000000000000ZZZ' })).toMatchObject({
      ok: false,
      code: 'P-PRECOND-ARTIFACT-NOT-FOUND',
      lines: [],
    });
    expect(await probe(new HostSim({ allow: [] }), { mode: 'lines', id })).toMatchObject({ ...FORBIDDEN, lines: [] });
  });

  it('nextPiece returns the text piece by piece in whole characters, each bulk read going on where the last one ended', async () => {
    const sim = new HostSim();
    const text = 'ab😀cdé'.repeat(5);
    const id = sim.addArtifact(text);
    const out = await probe(sim, { mode: 'pieces', id, piece_length: 7 });
    expect(out.pieces_text.join('')).toBe(text);
    // A piece, and at most the 3 bytes of a character the last read cut, which wait for the
    // next read (so no piece holds U+FFFD).
    for (const piece of out.pieces_text) expect(Buffer.byteLength(piece)).toBeLessThanOrEqual(7 + 3);
    expect(out.pieces_text.join('')).not.toContain('\ufffd');
    const reads = sim.requests.filter((r) => r.name === 'artifact.read').map((r) => r.args.offset as number);
    expect(reads[0]).toBe(0);
    for (let i = 1; i < reads.length; i++) expect(reads[i]).toBeGreaterThan(reads[i - 1]!);
    expect(reads.length).toBe(out.pieces);
  });

  it('nextLinePartBytes: LFs, CR LF pairs, escapes and piece ends at every offset mod 16, lines longer than a piece', async () => {
    const sim = new HostSim();
    // Bytes >= 0x80 whose low seven bits are a quote (¢ = C2 A2), a backslash (ܜ = DC 9C) or a
    // control character (Ü = C3 9C) must pass as text; tabs, quotes, backslashes and control
    // characters arrive escaped, each splitting the piece's plain runs.
    const alphabet = ['A', 'c', 'G', '\t', '"', '\\', '\u0001', '\u001f', '¢', 'ܜ', 'Ü', '中', '😀', ' ', '\r'];
    let seed = 5;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed % n;
    };
    const lines: string[] = [];
    for (let length = 0; length < 40; length++) lines.push(Array.from({ length }, () => alphabet[rand(alphabet.length)]).join(''));
    lines.push('x'.repeat(3000), `${'ACGT'.repeat(500)}\tend`);
    const text = lines.map((line, i) => line + (i % 3 === 0 ? '\r\n' : '\n')).join('');
    const expected = referenceLines(text);
    const id = sim.addArtifact(text);
    for (const pieceLength of [...Array.from({ length: 37 }, (_, i) => i + 4), 61, 1000, 1 << 20]) {
      const out = await probe(sim, { mode: 'part_bytes', id, piece_length: pieceLength });
      const { lines: got, current } = joinParts(out.parts);
      expect({ pieceLength, current, lines: got }).toEqual({ pieceLength, current: '', lines: expected });
      expect(out).toMatchObject({ ok: true, done: true, line_number: expected.length });
    }
  });

  it('nextLinePartBytes ends a line exactly at a piece end and splits CR LF across pieces', async () => {
    const sim = new HostSim();
    // Piece length 8: "ACGTACG\n" fills the first piece; "TTTTTTT\r" ends the second, its LF starts the third.
    const id = sim.addArtifact('ACGTACG\nTTTTTTT\r\nGG\r\n');
    const out = await probe(sim, { mode: 'part_bytes', id, piece_length: 8 });
    expect(out.parts).toEqual([
      ['ACGTACG', true],
      ['TTTTTTT', false],
      ['', true],
      ['GG', true],
    ]);
    expect(out).toMatchObject({ ok: true, done: true, line_number: 3 });
  });

  it('finds every line end of a piece with more LFs than the shared list holds (16384)', async () => {
    const sim = new HostSim();
    const text = `head\n${'\n'.repeat(40_000)}${'ab\r\n'.repeat(5000)}tail`;
    const expected = referenceLines(text);
    const out = await probe(sim, { mode: 'part_bytes', id: sim.addArtifact(text) });
    expect(out).toMatchObject({ ok: true, done: true, pieces: 1, line_number: expected.length });
    expect((out.parts as Array<[string, boolean]>).map(([part]) => part)).toEqual(expected);
  });

  it('two readers in turns each get their own lines, though each fetch rewrites the shared LF list', async () => {
    const sim = new HostSim();
    const a = Array.from({ length: 300 }, (_, i) => `a${i}\t${'x'.repeat(i % 23)}`).join('\n');
    const b = `${Array.from({ length: 200 }, (_, i) => `b${i} ${'é'.repeat(i % 7)}`).join('\r\n')}\r\n`;
    for (const pieceLength of [16, 97, 1 << 20]) {
      const out = await probe(sim, { mode: 'two_readers', id: sim.addArtifact(a), other: sim.addArtifact(b), piece_length: pieceLength });
      expect({ pieceLength, lines: out.lines, other: out.other_lines }).toEqual({
        pieceLength,
        lines: referenceLines(a),
        other: referenceLines(b),
      });
      expect(out).toMatchObject({ ok: true, done: true, other_ok: true, other_done: true });
    }
  });

  it('readAll returns small content whole and refuses content over its limit', async () => {
    const sim = new HostSim();
    const id = sim.addArtifact('hello\r\nwörld');
    expect(await probe(sim, { mode: 'read_all', id, piece_length: 4 })).toMatchObject({ ok: true, text: 'hello\r\nwörld' });
    const big = sim.addArtifact('z'.repeat(5000));
    expect(await probe(sim, { mode: 'read_all', id: big, max_bytes: 1000, piece_length: 512 })).toMatchObject({
      ok: false,
      code: 'I-REQ-TOO-LARGE',
    });
  });
});

describe('JSONParser.rawKey', () => {
  it('leaves the string under the key as unescaped UTF-8 bytes in place, and parses the rest', async () => {
    const sim = new HostSim();
    const text = '{"a":"x","data":"l1\\nq\\"b\\\\s\\/\\t\\u0001\\ud83d\\ude00\\u00e9é\\ud800!","n":[1,{"data":2}]}';
    const out = await probe(sim, { mode: 'raw_key', text });
    expect(out).toEqual({ value: { a: 'x', data: '', n: [1, { data: 2 }] }, raw_start: 17, raw: 'l1\nq"b\\s/\t\u0001😀éé\ufffd!' });
  });

  it("records the offsets of the raw string's LFs, escaped as \\n or \\u000a, in its UTF-8 text", async () => {
    const sim = new HostSim();
    const raw = 'é\\n\\t\\n\\u000a\\"x\\\\\\n';
    const out = await probe(sim, { mode: 'raw_key', feeds: true, text: `{"data":"${raw}","n":1}` });
    const text = JSON.parse(`"${raw}"`) as string;
    const bytes = Buffer.from(text, 'utf8');
    const offsets = [...bytes.keys()].filter((i) => bytes[i] === 0x0a);
    expect(offsets).toHaveLength(4);
    expect(out).toMatchObject({ raw: text, line_feeds: offsets, value: { data: '', n: 1 } });
  });

  it('reports a malformed escape or an unterminated raw string', async () => {
    const sim = new HostSim();
    expect(await probe(sim, { mode: 'raw_key', text: '{"data":"a\\qb"}' })).toMatchObject({
      error: 'invalid escape in a string',
      position: 10,
    });
    expect(await probe(sim, { mode: 'raw_key', text: '{"data":"abc' })).toMatchObject({ error: 'unterminated string' });
    expect(await probe(sim, { mode: 'raw_key', text: '{"data":"a\u0001"}' })).toMatchObject({
      error: 'unescaped control character in a string',
    });
  });
});

describe('Artifact.readBytes', () => {
  it('returns binary content decoded from base64, in ranges', async () => {
    const sim = new HostSim();
    const bytes = Uint8Array.from({ length: 256 }, (_, i) => (i * 7) & 0xff);
    const id = sim.addArtifact(bytes);
    const out = await probe(sim, { mode: 'read_bytes', id, offset: 10, length: 100 });
    expect(out).toEqual({ ok: true, bytes: [...bytes.subarray(10, 110)], next_offset: 110, eof: false });
    expect((await probe(sim, { mode: 'read_bytes', id, offset: 200 })).eof).toBe(true);
  });
});

describe('ArtifactWriter', () => {
  function written(sim: HostSim, out: ProbeAnswer): string {
    return sim.artifactText(out.artifact_id);
  }

  it('sends pieces of about pieceBytes, only the last one final, and returns the new id', async () => {
    const sim = new HostSim({ roles: ['report'] });
    const chunks = Array.from({ length: 300 }, (_, i) => `row ${i}\t"q" \\ é😀`);
    const out = await probe(sim, {
      mode: 'write',
      role: 'report',
      type: 'text',
      label: 'my report',
      piece_bytes: 1024,
      chunks,
      lines: true,
    });
    expect(out).toMatchObject({ ok: true, finished: true, write_after_finish: false });
    expect(written(sim, out)).toBe(chunks.map((c) => `${c}\n`).join(''));
    expect(out.size).toBe(Buffer.byteLength(written(sim, out)));
    const pieces = sim.pieces;
    expect(pieces.length).toBe(out.pieces_sent);
    expect(pieces.length).toBeGreaterThan(5);
    expect(pieces.map((p) => p.final)).toEqual([...Array(pieces.length - 1).fill(false), true]);
    // A piece is pieceBytes of raw UTF-8, and the character that crosses that line whole.
    for (const piece of pieces.slice(0, -1)) expect(piece.bytes).toSatisfy((n: number) => n >= 1024 && n <= 1027);
    for (const piece of pieces) expect(piece).toMatchObject({ role: 'report', type: 'text', label: 'my report', encoding: 'bulk' });
  });

  it('never splits a character between pieces and keeps control characters, quotes and backslashes as they are', async () => {
    const sim = new HostSim();
    // 1023 ASCII bytes, then characters of 2, 3 and 4 bytes across the 1024-byte boundary.
    const text = `${'a'.repeat(1023)}é中😀\u0001\u001f"\\\t\r\n\b\f${'ü'.repeat(700)}`;
    const out = await probe(sim, { mode: 'write', role: 'out', piece_bytes: 1024, chunks: [text] });
    expect(written(sim, out)).toBe(text);
    expect(sim.pieces.length).toBeGreaterThan(1);
  });

  it('joins a surrogate pair split across two writes and replaces lone surrogates with U+FFFD', async () => {
    const sim = new HostSim();
    const out = await probe(sim, { mode: 'write', role: 'out', chunks: ['x\ud83d', '\ude00y', 'lone\udc00 high\ud800', 'z\ud800'] });
    expect(written(sim, out)).toBe('x😀ylone\ufffd high\ufffdz\ufffd');
  });

  it('finish with nothing written seals an empty artifact', async () => {
    const sim = new HostSim();
    const out = await probe(sim, { mode: 'write', role: 'out', chunks: [] });
    expect(out).toMatchObject({ ok: true, pieces_sent: 1, size: 0 });
    expect(written(sim, out)).toBe('');
  });

  it('reports the host refusing an undeclared role and returns no id', async () => {
    const sim = new HostSim({ roles: ['report'] });
    const out = await probe(sim, { mode: 'write', role: 'other', chunks: ['data'] });
    expect(out).toMatchObject({ ok: false, code: 'C-CONTRACT-OUTPUT-ROLE', finished: false, pieces_sent: 0 });
    expect(out.artifact_id).toBeUndefined();
    expect(await probe(new HostSim({ allow: [] }), { mode: 'write', role: 'r', chunks: ['x'] })).toMatchObject(FORBIDDEN);
  });

  it('writes any bytes, as they are, in binary mode', async () => {
    const sim = new HostSim();
    const bytes = Array.from({ length: 3000 }, (_, i) => (i * 31) & 0xff);
    const out = await probe(sim, {
      mode: 'write',
      role: 'bin',
      binary: true,
      piece_bytes: 1024,
      chunks: [bytes.slice(0, 1500), bytes.slice(1500)],
    });
    expect(out.ok).toBe(true);
    expect([...sim.artifacts.get(out.artifact_id)!.bytes]).toEqual(bytes);
    expect(sim.pieces.map((p) => [p.encoding, p.bytes])).toEqual([
      ['bulk', 1024],
      ['bulk', 1024],
      ['bulk', 952],
    ]);
  });

  it('Artifact.write sends one final piece', async () => {
    const sim = new HostSim();
    const out = await probe(sim, { mode: 'write_once', role: 'note', data: 'hello "world"\n' });
    expect(out).toMatchObject({ ok: true, role: 'note' });
    expect(sim.artifactText(out.artifact_id)).toBe('hello "world"\n');
  });
});

describe('Http', () => {
  const response = {
    status: 404,
    headers: { 'content-type': 'text/plain' },
    body: 'not here',
    body_encoding: 'utf8',
    url: 'https://example.org:443/y',
  };

  it('request sends method, url, headers and body, and returns status, headers and body', async () => {
    const seen: unknown[] = [];
    const sim = new HostSim({
      handlers: {
        'http.request': (args) => {
          seen.push(args);
          return response;
        },
      },
    });
    const out = await probe(sim, {
      mode: 'http',
      method: 'POST',
      url: 'https://example.org:443/x',
      headers: { Accept: 'text/plain' },
      body: 'q=1',
      max_response_bytes: 1000,
    });
    expect(seen).toEqual([
      {
        method: 'POST',
        url: 'https://example.org:443/x',
        headers: { Accept: 'text/plain' },
        body: 'q=1',
        body_encoding: 'utf8',
        max_response_bytes: 1000,
      },
    ]);
    expect(out).toEqual({
      ok: true,
      status: 404,
      body: 'not here',
      body_encoding: 'utf8',
      success: false,
      url: 'https://example.org:443/y',
      content_type: 'text/plain',
      body_bytes: 8,
    });
  });

  it('decodes a base64 body and reports refusals as errors', async () => {
    const sim = new HostSim({
      handlers: {
        'http.request': on(httpRequest, (args) => {
          if (args.url.includes('private')) throw new SimError('A-AUTH-HTTP-PRIVATE-ADDRESS', 'The host is private.', { host: '10.0.0.1' });
          return { status: 200, headers: {}, body: Buffer.from([0, 1, 2, 255]).toString('base64'), body_encoding: 'base64', url: args.url };
        }),
      },
    });
    expect(await probe(sim, { mode: 'http', method: 'GET', url: 'https://example.org:443/' })).toMatchObject({
      ok: true,
      status: 200,
      success: true,
      body_bytes: 4,
    });
    expect(await probe(sim, { mode: 'http', method: 'GET', url: 'http://private:80/' })).toMatchObject({
      ok: false,
      code: 'A-AUTH-HTTP-PRIVATE-ADDRESS',
      details: { host: '10.0.0.1' },
      status: 0,
    });
    expect(
      await probe(new HostSim({ allow: [], handlers: { 'http.request': () => response } }), {
        mode: 'http',
        method: 'GET',
        url: 'https://a.org:443/',
      }),
    ).toMatchObject(FORBIDDEN);
  });
});

describe('Secrets', () => {
  it('get returns a secret allowed by its scoped entry and gets the same forbidden error for any other', async () => {
    const options: HostSimOptions = { allow: ['secrets.get.api_token'], secrets: { api_token: 's3cr3t', other: 'x' } };
    expect(await probe(new HostSim(options), { mode: 'secret', name: 'api_token' })).toEqual({ ok: true, value: 's3cr3t' });
    const other = await probe(new HostSim(options), { mode: 'secret', name: 'other' });
    const clock = await probe(new HostSim(options), { mode: 'clock' });
    expect(other).toMatchObject({ ...FORBIDDEN, value: '' });
    expect({ code: other.code, message: other.message, hint: other.hint }).toEqual({
      code: clock.code,
      message: clock.message,
      hint: clock.hint,
    });
  });

  it('get reports a granted but unconfigured secret', async () => {
    const out = await probe(new HostSim({ allow: ['secrets.get.missing'] }), { mode: 'secret', name: 'missing' });
    expect(out).toMatchObject({ ok: false, code: 'P-PRECOND-SECRET-MISSING' });
  });
});

describe('Base64', () => {
  it('encodes as RFC 4648 and decodes what Node encodes, refusing malformed text', async () => {
    const sim = new HostSim();
    for (const text of ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar', 'é😀\u0000']) {
      const bytes = Buffer.from(text, 'utf8');
      const out = await probe(sim, { mode: 'base64', text, decode: bytes.toString('base64') });
      expect(out).toEqual({ encoded: bytes.toString('base64'), decoded: [...bytes] });
    }
    for (const bad of ['abc', 'ab=c', 'a===', '@@@@', 'ab==cd==']) {
      expect((await probe(sim, { mode: 'base64', decode: bad })).decoded, bad).toBeNull();
    }
  });
});

describe('CapabilityStatus.toResult', () => {
  it('passes a host error on with its code, and turns I-REQ errors into S-TOOL-CAPABILITY-REQUEST', async () => {
    const sim = new HostSim();
    const missing = callTool(await sim.instantiate(module), { mode: 'pass_on', id: 'art_00000000000000000000000ZZZ' });
    expect(missing.kind === 'output' && missing.envelope.error).toMatchObject({
      code: 'P-PRECOND-ARTIFACT-NOT-FOUND',
      message: 'reading the input: No artifact art_00000000000000000000000ZZZ.',
      details: { artifact_id: 'art_00000000000000000000000ZZZ' },
    });
    const malformed = callTool(await sim.instantiate(module), { mode: 'pass_on', id: 'bad' });
    expect(malformed.kind === 'output' && malformed.envelope.error).toMatchObject({
      code: 'S-TOOL-CAPABILITY-REQUEST',
      details: { capability_code: 'I-REQ-CAPABILITY-ARGS' },
    });
  });
});

describe('the simulation', () => {
  it('answers every refused name with the same bytes', () => {
    const sim = new HostSim({ allow: ['kv.get'] });
    const a = sim.answer(JSON.stringify({ abi_version: 1, name: 'secrets.get', args: { name: 'x' } }));
    const b = sim.answer(JSON.stringify({ abi_version: 1, name: 'no.such', args: {} }));
    expect(a).toBe(b);
    expect(JSON.parse(sim.answer('{"abi_version":2}')).error.code).toBe('I-REQ-ENVELOPE');
  });
});
