// seq.revcomp, built from source and called the way the host calls it, against the SDK's
// simulated broker (artifacts, kv and log in memory): output against a JS reference, errors,
// statistics, logs, fixtures, and the manifest's memory and fuel limits on an instrumented build.

import { cp, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../abi/index.js';
import { buildToolpack } from '../../../host/6-faces/toolchain/build-toolpack.js';
import { loadToolpacks, type LoadedTool } from '../../../host/4-calls/loader/load-toolpacks.js';
import { FUEL_EXPORT, instrumentModule, START_EXPORT } from '../../../host/2-sandbox/wasm/index.js';
import { type CallOutcome, callTool, type GuestEnvelope } from '../../../sdk-guest/assemblyscript/test/harness.js';
import { HostSim, type HostSimOptions } from '../../../sdk-guest/assemblyscript/test/host-sim.js';

const PACK = fileURLToPath(new URL('..', import.meta.url));
const REPO = path.resolve(PACK, '../..');
const ALLOW = ['artifact.stat', 'artifact.read', 'artifact.write', 'log.emit', 'kv.get', 'kv.put'];

let root: string;
let bytes: Uint8Array;
let module: WebAssembly.Module;
let tool: LoadedTool;

// Built and loaded from a copy, so the repository's build output and digest stay untouched.
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-revcomp-'));
  await symlink(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const copy = path.join(root, 'plugins/seq-revcomp');
  await cp(PACK, copy, { recursive: true, filter: (source) => !['build', 'test'].includes(path.basename(source)) });
  const built = await buildToolpack(copy);
  bytes = await readFile(built.modulePath);
  module = new WebAssembly.Module(bytes);
  const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, grants: { '*': ['artifact.*', 'log.*', 'kv.*'] } });
  const loaded = await loadToolpacks(path.join(root, 'plugins'), policy);
  expect(loaded.violations).toEqual([]);
  tool = loaded.tools[0]!;
}, 180_000);

afterAll(async () => {
  if (root) await rm(root, { recursive: true, force: true });
});

// ---- the JS reference -----------------------------------------------------------------

const COMPLEMENT: Record<string, string> = {};
for (const [a, b] of ['AT', 'CG', 'RY', 'KM', 'BV', 'DH', 'SS', 'WW', 'NN', '--', '..']) {
  for (const [x, y] of [
    [a!, b!],
    [a!.toLowerCase(), b!.toLowerCase()],
  ]) {
    COMPLEMENT[x!] = y!;
    COMPLEMENT[y!] = x!;
  }
}
COMPLEMENT.U = 'A';
COMPLEMENT.u = 'a';

/** What seq.revcomp should write for `text`: each record reversed and complemented, wrapped at its first line's width. */
function reference(text: string, lineWidth = 0): { fasta: string; records: number; bases: number } {
  const lines = text.split('\n').map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
  if (text.endsWith('\n') || text === '') lines.pop();
  const records: Array<{ header: string; sequence: string; width: number }> = [];
  for (const line of lines) {
    if (line.startsWith('>')) records.push({ header: line.slice(1), sequence: '', width: lineWidth });
    else if (records.length > 0) {
      const bases = line.replace(/[ \t]/g, '');
      const record = records.at(-1)!;
      if (record.width === 0 && bases.length > 0) record.width = bases.length;
      record.sequence += bases;
    }
  }
  let fasta = '';
  let bases = 0;
  for (const { header, sequence, width } of records) {
    const reversed = [...sequence]
      .reverse()
      .map((c) => COMPLEMENT[c])
      .join('');
    fasta += `>${header} revcomp\n`;
    for (let i = 0; i < reversed.length; i += width) fasta += `${reversed.slice(i, i + width)}\n`;
    bases += sequence.length;
  }
  return { fasta, records: records.length, bases };
}

/** Random FASTA: several records of random widths, mixed case, N runs, IUPAC codes, blank lines, CRLF. */
function randomFasta(seed: number, records: number): string {
  const rand = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const codes = 'ACGTACGTACGTacgtacgtRYKMBDHVSWNryswkmbdhvn-.Uu';
  const eol = rand(2) === 0 ? '\n' : '\r\n';
  let out = '';
  for (let r = 0; r < records; r++) {
    out += `>rec${r} sample=${rand(1000)} "quoted" \\ tab\there é${eol}`;
    const width = 1 + rand(90);
    const length = rand(5) === 0 ? 0 : rand(3000);
    let sequence = '';
    while (sequence.length < length) sequence += rand(10) === 0 ? 'N'.repeat(1 + rand(40)) : codes[rand(codes.length)];
    sequence = sequence.slice(0, length);
    for (let i = 0; i < sequence.length; i += width) {
      out += sequence.slice(i, i + width) + eol;
      if (rand(50) === 0) out += eol;
    }
  }
  // Sometimes no newline after the last line.
  return rand(3) === 0 ? out.replace(/\r?\n$/, '') : out;
}

// ---- calling the tool -----------------------------------------------------------------

function newSim(options: HostSimOptions = {}): HostSim {
  return new HostSim({ allow: ALLOW, roles: ['revcomp'], ...options });
}

async function call(sim: HostSim, input: Record<string, unknown>): Promise<CallOutcome> {
  expect(tool.validateInput(input)).toEqual([]);
  const outcome = callTool(await sim.instantiate(module), input);
  if (outcome.kind === 'output' && outcome.envelope.status === 'ok') expect(tool.validateOutput(outcome.envelope.output)).toEqual([]);
  return outcome;
}

/** seq.revcomp's output (schemas/output.json). */
interface RevcompOutput {
  revcomp: string;
  records: number;
  bases: number;
}

async function revcomp(sim: HostSim, input: Record<string, unknown>): Promise<{ output: RevcompOutput; fasta: string }> {
  const outcome = await call(sim, input);
  if (outcome.kind !== 'output' || outcome.envelope.status !== 'ok') throw new Error(`expected ok, got ${JSON.stringify(outcome)}`);
  const output = outcome.envelope.output as RevcompOutput;
  return { output, fasta: sim.artifactText(output.revcomp) };
}

async function failure(sim: HostSim, input: Record<string, unknown>): Promise<NonNullable<GuestEnvelope['error']>> {
  const outcome = await call(sim, input);
  if (outcome.kind !== 'output' || outcome.envelope.status !== 'error' || outcome.envelope.error === undefined)
    throw new Error(`expected an error, got ${JSON.stringify(outcome)}`);
  return outcome.envelope.error;
}

// ---- tests ----------------------------------------------------------------------------

describe('the seq.revcomp module', () => {
  it('imports helix_v1.capability_call and capability_call_bulk, and exports the helix/v1 functions', () => {
    expect(WebAssembly.Module.imports(module)).toEqual([
      { module: 'helix_v1', name: 'capability_call', kind: 'function' },
      { module: 'helix_v1', name: 'capability_call_bulk', kind: 'function' },
    ]);
    expect(
      WebAssembly.Module.exports(module)
        .map((e) => e.name)
        .sort(),
    ).toEqual(['alloc', 'dealloc', 'execute', 'helix_panic', 'memory']);
  });

  it('loads under a policy granting its capabilities, with its declared output', () => {
    expect(tool.manifest).toMatchObject({ id: 'seq.revcomp', version: '1.0.0', deterministic: 'idempotent' });
    expect(tool.manifest.capabilities.allow).toEqual(ALLOW);
    expect(tool.manifest.declaredOutputs).toEqual([{ role: 'revcomp', type: 'fasta', label: 'reverse complement' }]);
  });
});

describe('seq.revcomp', () => {
  it('matches the JS reference on random multi-line FASTA, for every read piece size', async () => {
    for (let seed = 1; seed <= 12; seed++) {
      const text = randomFasta(seed, 1 + (seed % 6));
      const expected = reference(text);
      // Small pieces put CR LF pairs, records and lines across piece boundaries.
      for (const readPieceCap of [7, 100, 4096, 1 << 20]) {
        const sim = newSim({ readPieceCap });
        const { output, fasta } = await revcomp(sim, { fasta: sim.addArtifact(text, { type: 'fasta' }) });
        expect({ seed, readPieceCap, fasta }).toEqual({ seed, readPieceCap, fasta: expected.fasta });
        expect(output).toMatchObject({ records: expected.records, bases: expected.bases });
      }
    }
  });

  it('reads a gzip artifact decompressed', async () => {
    const sim = newSim();
    const text = randomFasta(99, 4);
    const id = sim.addArtifact(text, { type: 'fasta', gzip: true });
    const { fasta } = await revcomp(sim, { fasta: id });
    expect(fasta).toBe(reference(text).fasta);
    expect(sim.requests.filter((r) => r.name === 'artifact.read').every((r) => r.args.decompress === true)).toBe(true);
  });

  it('wraps at line_width when given', async () => {
    const sim = newSim();
    const text = '>a\nACGTACGTAC\nGG\n>b\nTTTT\n';
    const { fasta } = await revcomp(sim, { fasta: sim.addArtifact(text), line_width: 4 });
    expect(fasta).toBe('>a revcomp\nCCGT\nACGT\nACGT\n>b revcomp\nAAAA\n');
    expect(fasta).toBe(reference(text, 4).fasta);
  });

  it('keeps an unwrapped record on one line and an empty record as its header alone', async () => {
    const sim = newSim();
    const long = 'ACGTN'.repeat(5000);
    const { fasta, output } = await revcomp(sim, { fasta: sim.addArtifact(`>empty\n>long one\n${long}\n>\n`) });
    expect(fasta).toBe(`>empty revcomp\n>long one revcomp\n${reference(`>x\n${long}\n`).fasta.split('\n')[1]}\n> revcomp\n`);
    expect(output).toMatchObject({ records: 3, bases: 25000 });
  });

  it('writes an empty artifact for an empty input', async () => {
    const sim = newSim();
    const { fasta, output } = await revcomp(sim, { fasta: sim.addArtifact('\n\n') });
    expect({ fasta, records: output.records, bases: output.bases }).toEqual({ fasta: '', records: 0, bases: 0 });
  });

  it('writes the output as a fasta artifact under its declared role, labelled', async () => {
    const sim = newSim();
    const id = sim.addArtifact('>a\nAC\n', { label: 'reads' });
    const { output } = await revcomp(sim, { fasta: id });
    expect(sim.artifacts.get(output.revcomp)).toMatchObject({ type: 'fasta', label: 'reverse complement of reads' });
    const labelled = await revcomp(sim, { fasta: id, label: 'mine' });
    expect(sim.artifacts.get(labelled.output.revcomp)!.label).toBe('mine');
    expect(sim.pieces.every((p) => p.role === 'revcomp' && p.type === 'fasta')).toBe(true);
  });

  it('sends output in raw pieces of 1 MiB and reads 1 MiB pieces at multiples of 1 MiB', async () => {
    const sim = newSim();
    const text = `>big\n${'ACGTTGCA'.repeat(200_000)}\n`;
    const { fasta } = await revcomp(sim, { fasta: sim.addArtifact(text) });
    expect(fasta).toBe(reference(text).fasta);
    const size = Buffer.byteLength(fasta);
    expect(sim.pieces.map((p) => [p.bytes, p.final, p.encoding])).toEqual([
      [1 << 20, false, 'bulk'],
      [size - (1 << 20), true, 'bulk'],
    ]);
    // Whole pieces at aligned offsets: the host names each by its stored chunk.
    expect(sim.requests.filter((r) => r.name === 'artifact.read').map((r) => [r.args.offset, r.args.length])).toEqual([
      [0, undefined],
      [1 << 20, undefined],
    ]);
  });
});

describe('seq.revcomp errors', () => {
  it('refuses text that is not FASTA with D-DATA-FORMAT naming the line and column', async () => {
    const sim = newSim();
    const table = await failure(sim, { fasta: sim.addArtifact('sample\tcount\nA1\t12\n') });
    expect(table).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1, column: 1, character: 's' } });
    expect(table.message).toBe("not FASTA: line 1, column 1: expected a header line starting with '>' before any sequence");
    // M, K and V are nucleotide codes too; L is not.
    const protein = await failure(sim, { fasta: sim.addArtifact('>p\r\nACGT\r\nMKVLAT\r\n') });
    expect(protein).toMatchObject({
      code: 'D-DATA-FORMAT',
      message: "not FASTA: line 3, column 4: 'L' is not a nucleotide code",
      details: { line: 3, column: 4, character: 'L' },
    });
    const emoji = await failure(sim, { fasta: sim.addArtifact('\n>e\nAC GT😀\n') });
    expect(emoji.details).toMatchObject({ line: 3, column: 6, character: '😀' });
    const control = await failure(sim, { fasta: sim.addArtifact('>c\nAC\u0001\n') });
    expect(control.message).toBe("not FASTA: line 2, column 3: 'U+0001' is not a nucleotide code");
  });

  it('refuses a header longer than 64 KiB', async () => {
    const sim = newSim({ readPieceCap: 10_000 });
    const error = await failure(sim, { fasta: sim.addArtifact(`>${'h'.repeat(70_000)}\nACGT\n`) });
    expect(error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 1, max_header_bytes: 65536 } });
  });

  it('refuses a record over 8 Mi bases with I-REQ-TOO-LARGE, and takes one of exactly 8 Mi', async () => {
    const sim = newSim();
    const max = 8 * 1024 * 1024;
    const error = await failure(sim, { fasta: sim.addArtifact(`>huge\n${'A'.repeat(max + 1)}\n`) });
    expect(error).toMatchObject({ code: 'I-REQ-TOO-LARGE', details: { record: 1, line: 2, max_record_length: max, header: 'huge' } });
    const { output } = await revcomp(sim, { fasta: sim.addArtifact(`>fits\n${'C'.repeat(max)}\n`) });
    expect(output.bases).toBe(max);
  });

  it('passes on a missing artifact as P-PRECOND-ARTIFACT-NOT-FOUND and a refused capability as A-AUTH-FORBIDDEN', async () => {
    expect(await failure(newSim(), { fasta: 'art_00000000000000000000000000' })).toMatchObject({ code: 'P-PRECOND-ARTIFACT-NOT-FOUND' });
    const sim = newSim({ allow: ALLOW.filter((name) => name !== 'artifact.write') });
    expect(await failure(sim, { fasta: sim.addArtifact('>a\nAC\n') })).toMatchObject({
      code: 'A-AUTH-FORBIDDEN',
      message: 'artifact.write revcomp: forbidden',
    });
  });
});

describe('seq.revcomp statistics and logs', () => {
  it('accumulates runs, records and bases in kv across calls', async () => {
    const sim = newSim();
    await revcomp(sim, { fasta: sim.addArtifact('>a\nACGT\n>b\nGG\n') });
    expect(sim.kv.get('stats')).toEqual({ runs: 1, records: 2, bases: 6 });
    await revcomp(sim, { fasta: sim.addArtifact('>c\nAAAAA\n') });
    expect(sim.kv.get('stats')).toEqual({ runs: 2, records: 3, bases: 11 });
    expect(sim.requests.filter((r) => r.name.startsWith('kv.')).map((r) => r.name)).toEqual(['kv.get', 'kv.put', 'kv.get', 'kv.put']);
  });

  it('does not count failed runs', async () => {
    const sim = newSim();
    await failure(sim, { fasta: sim.addArtifact('not fasta') });
    expect(sim.kv.has('stats')).toBe(false);
  });

  it('logs start with the input size and finish with records and bases', async () => {
    const sim = newSim();
    const id = sim.addArtifact('>a\nACGT\n', { gzip: true });
    const { output } = await revcomp(sim, { fasta: id });
    expect(sim.logs).toEqual([
      {
        level: 'info',
        event: 'revcomp.started',
        fields: { fasta: id, size: sim.artifacts.get(id)!.bytes.length, compression: 'gzip', type: 'text' },
      },
      {
        level: 'info',
        event: 'revcomp.finished',
        fields: { revcomp: output.revcomp, records: 1, bases: 4, bytes: '>a revcomp\nACGT\n'.length },
      },
    ]);
  });

  it('still succeeds when kv is refused, with a warning in the log', async () => {
    const sim = newSim({ allow: ALLOW.filter((name) => !name.startsWith('kv.')) });
    const { output } = await revcomp(sim, { fasta: sim.addArtifact('>a\nAC\n') });
    expect(output.records).toBe(1);
    expect(sim.logs.map((l) => l.event)).toEqual(['revcomp.started', 'revcomp.stats_failed', 'revcomp.finished']);
    expect(sim.logs[1]).toEqual({ level: 'warn', event: 'revcomp.stats_failed', fields: { step: 'kv.get', code: 'A-AUTH-FORBIDDEN' } });
  });
});

describe('seq.revcomp fixtures', () => {
  it('pass, with @data/ inputs imported and @artifact: outputs compared to data files', async () => {
    const dir = path.join(PACK, 'fixtures');
    const names = (await readdir(dir)).filter((name) => name.endsWith('.json')).sort();
    expect(names).toEqual(['missing-artifact.json', 'not-fasta.json', 'small-gzip.json', 'small.json']);
    for (const name of names) {
      const fixture = JSON.parse(await readFile(path.join(dir, name), 'utf8'));
      const sim = newSim();
      const input: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(fixture.input)) {
        if (typeof value === 'string' && value.startsWith('@data/')) {
          const data = await readFile(path.join(PACK, value.slice(1)));
          input[key] = value.endsWith('.gz')
            ? sim.addArtifact(new Uint8Array(data), { gzip: new Uint8Array(data) })
            : sim.addArtifact(new Uint8Array(data));
        } else input[key] = value;
      }
      const outcome = await call(sim, input);
      if (outcome.kind !== 'output') throw new Error(`${name} trapped`);
      if (fixture.expect.error_code !== undefined) {
        expect({ name, code: outcome.envelope.error?.code }).toEqual({ name, code: fixture.expect.error_code });
        continue;
      }
      expect(outcome.envelope.status, name).toBe('ok');
      for (const [key, value] of Object.entries(fixture.expect.output)) {
        const actual = (outcome.envelope.output as Record<string, unknown>)[key];
        if (typeof value === 'string' && value.startsWith('@artifact:')) {
          expect({ name, key, content: sim.artifactText(actual as string) }).toEqual({
            name,
            key,
            content: await readFile(path.join(PACK, value.slice('@artifact:'.length)), 'utf8'),
          });
        } else expect({ name, key, actual }).toEqual({ name, key, actual: value });
      }
    }
  });

  it('expect what the JS reference computes for data/small.fa, and small.fa.gz holds the same text', async () => {
    const text = await readFile(path.join(PACK, 'data/small.fa'), 'utf8');
    expect(await readFile(path.join(PACK, 'data/small.revcomp.fa'), 'utf8')).toBe(reference(text).fasta);
    const { gunzipSync } = await import('node:zlib');
    expect(gunzipSync(await readFile(path.join(PACK, 'data/small.fa.gz'))).toString('utf8')).toBe(text);
    expect(reference(text)).toMatchObject({ records: 3, bases: 120 });
  });
});

describe('seq.revcomp limits', () => {
  /** One call of an instrumented build under the manifest's memory cap; returns fuel used. */
  async function metered(sim: HostSim, input: Record<string, unknown>): Promise<{ outcome: CallOutcome; fuel: number; pages: number }> {
    const instrumented = instrumentModule(bytes, { maxMemoryPages: tool.limits.maxMemoryPages });
    const exports = await sim.instantiate(new WebAssembly.Module(instrumented.bytes));
    const added = exports as unknown as Record<string, unknown>;
    const meter = added[FUEL_EXPORT] as WebAssembly.Global<'i64'>;
    const budget = BigInt(tool.limits.fuel);
    meter.value = budget;
    (added[START_EXPORT] as (() => void) | undefined)?.();
    const outcome = callTool(exports, input);
    return { outcome, fuel: Number(budget - meter.value), pages: exports.memory.buffer.byteLength / 65536 };
  }

  it('holds the largest record within maxMemoryPages, with CR LF lines', async () => {
    const sim = newSim();
    const text = `>max\r\n${'ACGTN'
      .repeat((8 * 1024 * 1024) / 5)
      .padEnd(8 * 1024 * 1024, 'A')
      .match(/.{1,60}/g)!
      .join('\r\n')}\r\n`;
    const { outcome, pages } = await metered(sim, { fasta: sim.addArtifact(text) });
    expect(outcome.kind === 'output' && outcome.envelope.output).toMatchObject({ records: 1, bases: 8 * 1024 * 1024 });
    expect(pages).toBeLessThanOrEqual(tool.limits.maxMemoryPages);
  });

  it('spends little enough fuel per byte that the manifest budget covers 100 MB of 60-column FASTA', async () => {
    const sim = newSim();
    let text = '';
    for (let r = 0; r < 12_000; r++)
      text += `>read${r} len=300\n${'ACGTNacgtRYKM'
        .repeat(24)
        .slice(0, 300)
        .match(/.{1,60}/g)!
        .join('\n')}\n`;
    const { outcome, fuel } = await metered(sim, { fasta: sim.addArtifact(text) });
    expect(outcome.kind === 'output' && outcome.envelope.status).toBe('ok');
    const perByte = fuel / text.length;
    expect(perByte).toBeLessThan(60);
    expect(perByte * 100e6).toBeLessThan(tool.limits.fuel);
    // Pieces of 1 MiB in and 512 KiB out, plus stat, two logs and two kv calls.
    expect(Math.ceil(100e6 / (1 << 20)) + Math.ceil(100e6 / (500 * 1024)) + 5).toBeLessThan(tool.manifest.limits.maxCapabilityCalls!);
  });
});
