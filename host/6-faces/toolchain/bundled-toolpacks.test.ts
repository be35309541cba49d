// The toolpacks in plugins/ and bench/fixtures/: each rebuilds to the digest its manifest
// carries, and each module behaves as documented when called the way the host calls it.

import { createHash } from 'node:crypto';
import { cp, mkdtemp, readdir, readFile, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildToolpack, findToolpackDirs, type BuildToolpackResult } from './build-toolpack.js';
import { readManifestFields } from './manifest-digest.js';
import { loadExtism } from '../../2-sandbox/engine/extism.js';

// Through the host's loader: it keeps the SDK's WASI ExperimentalWarning (WASI is never used) off stderr.
const createPlugin = await loadExtism();

const REPO = fileURLToPath(new URL('../../..', import.meta.url));

let root: string;
const built = new Map<string, { result: BuildToolpackResult; committedDigest: string | null; bytes: Uint8Array }>();

// Each pack is copied to the same relative place under a temporary root, so the repository's
// own files (committed digests, build output) are never touched by the test.
beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-bundled-'));
  await symlink(path.join(REPO, 'node_modules'), path.join(root, 'node_modules'), 'dir');
  const dirs = [...(await findToolpackDirs(path.join(REPO, 'plugins'))), ...(await findToolpackDirs(path.join(REPO, 'bench/fixtures')))];
  for (const dir of dirs) {
    const relative = path.relative(REPO, dir);
    const copy = path.join(root, relative);
    await cp(dir, copy, { recursive: true, filter: (source) => path.basename(source) !== 'build' });
    const manifestName = (await readdir(dir)).find((name) => name.endsWith('.tool.yaml'))!;
    const committed = readManifestFields(await readFile(path.join(dir, manifestName), 'utf8'), manifestName);
    const result = await buildToolpack(copy);
    built.set(relative, { result, committedDigest: committed.digest, bytes: await readFile(result.modulePath) });
  }
}, 180_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

function pack(relative: string) {
  const entry = built.get(relative);
  if (!entry) throw new Error(`${relative} was not built`);
  return entry;
}

/** The exports the host calls on a helix/v1 module. */
interface GuestExports {
  memory: WebAssembly.Memory;
  alloc(len: number): number;
  dealloc(ptr: number, len: number): void;
  execute(ptr: number, len: number): bigint;
}

/** A module's answer, as these tests read it. */
interface Envelope {
  status: string;
  output?: unknown;
  error?: { code: string; message: string };
}

/** One call following the host flow: alloc, copy, execute, read, dealloc. */
async function call(bytes: Uint8Array, input: unknown): Promise<{ text: string; envelope: Envelope }> {
  const instance = await WebAssembly.instantiate(new WebAssembly.Module(bytes), {});
  const exports = instance.exports as unknown as GuestExports;
  const encoded = new TextEncoder().encode(JSON.stringify(input));
  const inPtr = exports.alloc(encoded.length);
  new Uint8Array(exports.memory.buffer, inPtr, encoded.length).set(encoded);
  const packed = BigInt.asUintN(64, exports.execute(inPtr, encoded.length));
  const outPtr = Number(packed >> 32n);
  const outLen = Number(packed & 0xffffffffn);
  const text = new TextDecoder('utf-8', { fatal: true }).decode(new Uint8Array(exports.memory.buffer, outPtr, outLen));
  exports.dealloc(outPtr, outLen);
  exports.dealloc(inPtr, encoded.length);
  return { text, envelope: JSON.parse(text) as Envelope };
}

describe('the bundled toolpacks', () => {
  it('are all found and built', () => {
    expect([...built.keys()].sort()).toEqual([
      'bench/fixtures/compute',
      'bench/fixtures/echo',
      'bench/fixtures/echo-extism',
      'plugins/fasta-headers',
      'plugins/fastq-filter',
      'plugins/seq-gc-content',
      'plugins/seq-gc-skew',
      'plugins/seq-kmer-count',
      'plugins/seq-revcomp',
      'plugins/seq-stats',
      'plugins/seq-translate',
      'plugins/vcf-summary',
    ]);
  });

  it('carry in their manifests the digest their sources build to (run npm run build:wasm if not)', () => {
    for (const [relative, entry] of built) {
      expect({ pack: relative, digest: entry.committedDigest }).toEqual({ pack: relative, digest: entry.result.digest });
    }
  });

  it('import nothing when they are helix/v1 modules', () => {
    for (const relative of ['plugins/seq-gc-content', 'bench/fixtures/echo', 'bench/fixtures/compute']) {
      expect(WebAssembly.Module.imports(new WebAssembly.Module(pack(relative).bytes))).toEqual([]);
    }
  });
});

describe('seq.gc_content', () => {
  it('passes every fixture in its fixtures directory', async () => {
    const fixturesDir = path.join(REPO, 'plugins/seq-gc-content/fixtures');
    const names = (await readdir(fixturesDir)).filter((name) => name.endsWith('.json'));
    expect(names.length).toBeGreaterThanOrEqual(5);
    for (const name of names) {
      const fixture = JSON.parse(await readFile(path.join(fixturesDir, name), 'utf8'));
      const { envelope } = await call(pack('plugins/seq-gc-content').bytes, fixture.input);
      if ('output' in fixture.expect)
        expect({ name, envelope }).toEqual({ name, envelope: { status: 'ok', output: fixture.expect.output } });
      else expect({ name, code: envelope.error?.code }).toEqual({ name, code: fixture.expect.error_code });
    }
  });

  it('names the first invalid character and its index, with a hint', async () => {
    const { envelope } = await call(pack('plugins/seq-gc-content').bytes, { sequence: 'AC\nGT😀A' });
    expect(envelope).toEqual({
      status: 'error',
      error: {
        code: 'I-REQ-INPUT',
        message: "sequence has an invalid character '😀' at index 5",
        details: { character: '😀', index: 5 },
        hint: 'use IUPAC nucleotide codes (A C G T U R Y S W K M B D H V N, any case); whitespace is ignored',
      },
    });
  });
});

describe('bench.echo', () => {
  it('returns the input bytes verbatim inside an ok envelope', async () => {
    const input = { a: [1, 2.5, { b: 'é😀\n' }], c: null };
    const { text } = await call(pack('bench/fixtures/echo').bytes, input);
    expect(text).toBe(`{"status":"ok","output":${JSON.stringify(input)}}`);
  });
});

describe('bench.compute', () => {
  it('returns the iterated SHA-256 that node:crypto computes', async () => {
    let digest = createHash('sha256').update('helix.bench.compute').digest();
    for (let i = 0; i < 1000; i++) digest = createHash('sha256').update(digest).digest();
    const { envelope } = await call(pack('bench/fixtures/compute').bytes, { rounds: 1000 });
    expect(envelope).toEqual({ status: 'ok', output: { checksum: digest.toString('hex'), rounds: 1000 } });
  });

  it('refuses a negative round count with I-REQ-INPUT', async () => {
    const { envelope } = await call(pack('bench/fixtures/compute').bytes, { rounds: -1 });
    expect(envelope.error?.code).toBe('I-REQ-INPUT');
  });
});

describe('bench.echo_extism', () => {
  it('echoes through @extism/extism in a worker and closes cleanly', async () => {
    const plugin = await createPlugin(
      { wasm: [{ data: pack('bench/fixtures/echo-extism').bytes }] },
      { runInWorker: true, useWasi: false },
    );
    try {
      const input = JSON.stringify({ x: 'é😀', n: [1, 2] });
      const output = await plugin.call('echo', input);
      // The extism/v1 output rule: the plugin's output is the tool's output, here the input itself.
      expect(output?.text()).toBe(input);
    } finally {
      await plugin.close();
    }
  }, 30_000);
});
