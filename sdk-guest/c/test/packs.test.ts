// The C template (sdk-guest/templates/c) and the bundled C example (plugins/seq-gc-skew), each
// built with clang by the real build and run through the real host: the template's fixtures
// pass as made by `helix new --lang c`, and seq.gc_skew streams FASTA (plain, gzip, CRLF,
// multi-line, several read pieces) to the same windows as a JavaScript reference.
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { importInline } from '../../../host/4-calls/artifacts/prepare-artifact.js';
import { buildToolpack } from '../../../host/6-faces/toolchain/build-toolpack.js';
import { runFixtures } from '../../../host/6-faces/devloop/run-fixtures.js';
import { hostStore } from '../../../host/5-host/host.js';
import { createHost, type Host, type WasmTool } from '../../../host/index.js';
import { artifactBytes, REPO } from './c-packs.js';

const roots: string[] = [];
afterAll(() => {
  for (const root of roots) rmSync(root, { recursive: true, force: true });
});

function tempRoot(): string {
  const root = mkdtempSync(path.join(tmpdir(), 'helix-c-packs-'));
  roots.push(root);
  return root;
}

/** Copies a template as `helix new` does: every file, tokens replaced in names and contents. */
function instantiate(template: string, target: string, tokens: Record<string, string>): void {
  const replace = (text: string) => Object.entries(tokens).reduce((out, [token, value]) => out.split(token).join(value), text);
  for (const name of readdirSync(template)) {
    const source = path.join(template, name);
    const dest = path.join(target, replace(name));
    if (statSync(source).isDirectory()) {
      mkdirSync(dest, { recursive: true });
      instantiate(source, dest, tokens);
    } else {
      // Text is substituted; a binary file (a NUL byte) is copied as it is, as helix new does.
      const bytes = readFileSync(source);
      writeFileSync(dest, bytes.includes(0) ? bytes : replace(bytes.toString('utf8')));
    }
  }
}

async function withHost<T>(toolpacksDir: string, run: (host: Host) => Promise<T>): Promise<T> {
  const host = await createHost({ toolpacksDir, home: path.join(path.dirname(toolpacksDir), `home-${Date.now()}`) });
  try {
    return await run(host);
  } finally {
    await host.close();
  }
}

const wasmTools = (host: Host) => host.tools().filter((t): t is WasmTool => t.kind === 'wasm');

describe('the C template', () => {
  it('builds as made by helix new --lang c, imports only the capability calls (the reader on the bulk path), and passes its fixtures', async () => {
    const plugins = path.join(tempRoot(), 'plugins');
    const dir = path.join(plugins, 'my-count');
    mkdirSync(dir, { recursive: true });
    instantiate(path.join(REPO, 'sdk-guest/templates/c'), dir, {
      __NAME__: 'my-count',
      __ID__: 'my.count',
      __DESCRIPTION__: 'Counts \\"records\\"',
    });
    const manifestBefore = readFileSync(path.join(dir, 'my-count.tool.yaml'), 'utf8');
    expect(manifestBefore).not.toMatch(/__(NAME|ID|DESCRIPTION)__/);
    const built = await buildToolpack(dir);
    expect(built.modulePath).toBe(path.join(dir, 'build/my-count.wasm'));
    expect(readFileSync(built.manifestPath, 'utf8')).toMatch(new RegExp(`^digest: ${built.digest}$`, 'm'));
    const imports = WebAssembly.Module.imports(new WebAssembly.Module(readFileSync(built.modulePath)));
    expect(imports.map((i) => `${i.module}.${i.name} ${i.kind}`).sort()).toEqual([
      'helix_v1.capability_call function',
      'helix_v1.capability_call_bulk function',
    ]);

    await withHost(plugins, async (host) => {
      const [tool] = wasmTools(host);
      expect(tool?.id).toBe('my.count');
      expect(tool?.loaded.manifest.description).toBe('Counts "records"');
      const results = await runFixtures(host, tool!);
      expect(results.map((r) => [r.fixture, r.ok, r.problem])).toEqual([
        ['fasta.json', true, undefined],
        ['fastq.json', true, undefined],
        ['gzip.json', true, undefined],
        ['missing-input.json', true, undefined],
        ['not-sequences.json', true, undefined],
      ]);
      // Another file: the TSV lists each record's id (the header up to the first blank) and length.
      const fastq = await importInline(hostStore(host), '@r1 x\nACGTN\n+\nIIIII\n@r2\nGG\n+\n##\n', { label: 'reads.fq' });
      const r = await host.call({ tool_id: 'my.count', input: { sequences: fastq.id } });
      expect(r.output).toMatchObject({ format: 'FASTQ', records: 2, total_length: 7 });
      const tsv = await artifactBytes(host, (r.output as { lengths: string }).lengths);
      expect(tsv.toString()).toBe('id\tlength\nr1\t5\nr2\t2\n');
    });
  }, 120_000);
});

// ---- seq.gc_skew ------------------------------------------------------------------------

/** What seq.gc_skew should write for `fasta`: windows of `window` bases per record, as TSV. */
function reference(fasta: string, window: number): { tsv: string; records: number; bases: number; windows: number } {
  let tsv = 'record\tstart\tend\tgc_skew\tcumulative_skew\n';
  let records = 0,
    bases = 0,
    windows = 0;
  let name: string | null = null,
    position = 0,
    start = 0,
    g = 0,
    c = 0,
    cumulative = 0;
  const flush = () => {
    const skew = g + c === 0 ? 0 : (g - c) / (g + c);
    cumulative += skew;
    tsv += `${name}\t${start}\t${position}\t${skew}\t${cumulative}\n`;
    windows++;
    start = position;
    g = c = 0;
  };
  for (const raw of fasta.split('\n')) {
    const line = raw.replace(/\r$/, '');
    if (line.startsWith('>')) {
      if (name !== null && position > start) flush();
      name = line.slice(1).split(/[ \t]/)[0]!;
      position = start = g = c = cumulative = 0;
      records++;
      continue;
    }
    for (const base of line.replace(/[ \t\r]/g, '')) {
      if (base === 'G' || base === 'g') g++;
      else if (base === 'C' || base === 'c') c++;
      position++;
      bases++;
      if (position - start === window) flush();
    }
  }
  if (name !== null && position > start) flush();
  return { tsv, records, bases, windows };
}

/** A FASTA file with the cases real files have: wrapped lines, lowercase, N runs, empty records, CRLF. */
function generatedFasta(bases: number, crlf: boolean): string {
  let seed = 4242;
  const random = () => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed / 2 ** 31;
  };
  const eol = crlf ? '\r\n' : '\n';
  let out = '';
  for (let record = 0, left = bases; left > 0; record++) {
    out += `>rec${record} sample ${record}${eol}`;
    if (record % 3 === 1) continue; // an empty record
    const length = Math.min(left, 1 + Math.floor(random() * 400_000));
    let seq = '';
    for (let i = 0; i < length; i++) seq += random() < 0.01 ? 'NNNNN'[0] : 'ACGTacgtGGC'[Math.floor(random() * 11)];
    for (let i = 0; i < seq.length; i += 61) out += seq.slice(i, i + 61) + eol;
    left -= length;
  }
  return out;
}

describe('plugins/seq-gc-skew (the C example)', () => {
  let packDir: string;
  let plugins: string;

  it('rebuilds to the digest its manifest carries, twice to the same bytes', async () => {
    plugins = path.join(tempRoot(), 'plugins');
    packDir = path.join(plugins, 'seq-gc-skew');
    cpSync(path.join(REPO, 'plugins/seq-gc-skew'), packDir, {
      recursive: true,
      filter: (source) => !['build', 'test'].includes(path.basename(source)),
    });
    const committed = /^digest: (\S+)$/m.exec(readFileSync(path.join(REPO, 'plugins/seq-gc-skew/gc-skew.tool.yaml'), 'utf8'))?.[1];
    const first = await buildToolpack(packDir);
    expect(first.digest).toBe(committed);
    const bytes = readFileSync(first.modulePath);
    const second = await buildToolpack(packDir);
    expect(second).toEqual({ ...first, changed: false });
    expect(readFileSync(second.modulePath).equals(bytes)).toBe(true);
  }, 60_000);

  it('passes its fixtures through the real host', async () => {
    await withHost(plugins, async (host) => {
      const results = await runFixtures(host, wasmTools(host)[0]!);
      expect(results.filter((r) => !r.ok)).toEqual([]);
      expect(results.length).toBe(4);
    });
  }, 60_000);

  it('matches the reference on 3 Mbases of FASTA, plain and gzip, LF and CRLF, over several read pieces', async () => {
    await withHost(plugins, async (host) => {
      for (const crlf of [false, true]) {
        const fasta = generatedFasta(3_000_000, crlf);
        const want = reference(fasta, 10_000);
        expect(want.windows).toBeGreaterThan(300);
        for (const data of [fasta, gzipSync(fasta)]) {
          const record = await importInline(hostStore(host), data, { label: 'generated.fa' });
          const r = await host.call({ tool_id: 'seq.gc_skew', input: { fasta: record.id, window: 10_000 } });
          expect(r.error, JSON.stringify(r.error)).toBeUndefined();
          const out = r.output as { skew: string; records: number; bases: number; windows: number; window: number };
          expect({ records: out.records, bases: out.bases, windows: out.windows, window: out.window }).toEqual({
            records: want.records,
            bases: want.bases,
            windows: want.windows,
            window: 10_000,
          });
          expect((await artifactBytes(host, out.skew)).toString('utf8')).toBe(want.tsv);
        }
      }
    });
  }, 300_000);

  it('refuses text before the first header with D-DATA-FORMAT naming the line', async () => {
    await withHost(plugins, async (host) => {
      const record = await importInline(hostStore(host), '\n\nACGT\n>x\nGG\n', { label: 'headless.fa' });
      const r = await host.call({ tool_id: 'seq.gc_skew', input: { fasta: record.id } });
      expect(r.error).toMatchObject({ code: 'D-DATA-FORMAT', details: { line: 3 } });
      expect(r.error?.message).toMatch(/is not FASTA: line 3 holds sequence before any '>' header/);
    });
  }, 60_000);
});
