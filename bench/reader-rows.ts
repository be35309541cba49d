// The reader rows: the C SDK's helix_seq_reader against the AssemblyScript SDK's SeqReader on the
// same FASTA (60 columns) and FASTQ (100-150 base reads), called through one real host in this
// process: the bare readers (each SDK's read-cost probe, parts only) for fuel per byte and MB/s
// inside the tool, and the two templates of `helix new` for fuel per byte and memory_peak_pages,
// the figures their manifests' limits are set from. Every call runs on a fresh store (a repeated
// call would be replayed, not run). MB/s on the quick mode's 8 MiB is mostly compile and tier-up
// noise; the full mode's 32 MiB is the figure to read.
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { createToolpack } from '../cli/new-command.js';
import { packageRoot } from '../host/1-base/paths.js';
import { buildToolpack } from '../host/6-faces/toolchain/build-toolpack.js';
import { createHost } from '../host/index.js';
import { type BenchConfig, sizeText } from './options.js';
import { failedRow, makeRow, type Row } from './rows.js';
import { median } from './stats.js';

/** A deterministic stream of pseudo-random numbers below `n`. */
function random(seed: number): (n: number) => number {
  let state = seed >>> 0;
  return (n) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

/** About `size` bytes of FASTA: records of 1,000-5,000 bases in 60-column lines. */
export function benchFasta(size: number): Buffer {
  const next = random(11);
  const out = Buffer.alloc(size + 8192);
  let at = 0;
  for (let r = 0; at < size; r++) {
    at += out.write(`>contig${r} length unknown\n`, at, 'latin1');
    const length = 1000 + next(4000);
    for (let i = 0; i < length; i++) {
      out[at++] = 'ACGT'.charCodeAt(next(4));
      if (i % 60 === 59 || i === length - 1) out[at++] = 0x0a;
    }
  }
  return out.subarray(0, at);
}

/** About `size` bytes of FASTQ: reads of 100-150 bases, qualities '!'..'I'. */
export function benchFastq(size: number): Buffer {
  const next = random(12);
  const out = Buffer.alloc(size + 1024);
  let at = 0;
  for (let r = 0; at < size; r++) {
    const length = 100 + next(51);
    at += out.write(`@read${r}/1 sample=S1\n`, at, 'latin1');
    for (let i = 0; i < length; i++) out[at++] = 'ACGT'.charCodeAt(next(4));
    at += out.write('\n+\n', at, 'latin1');
    for (let i = 0; i < length; i++) out[at++] = 33 + next(41);
    out[at++] = 0x0a;
  }
  return out.subarray(0, at);
}

/** The four packs: each SDK's template as `helix new` makes it, and each SDK's read-cost probe in a copy of it. */
export async function makePacks(dir: string): Promise<void> {
  const root = packageRoot();
  createToolpack('tpl-c', { lang: 'c', dir });
  createToolpack('tpl-as', { lang: 'as', dir });
  const probes = [
    { name: 'probe-c', lang: 'c' as const, file: 'src/main.c', source: 'sdk-guest/c/test/programs/seq-cost.c' },
    {
      name: 'probe-as',
      lang: 'as' as const,
      file: 'assembly/index.ts',
      source: 'sdk-guest/assemblyscript/test/assembly/read-cost-probe.ts',
    },
  ];
  for (const probe of probes) {
    const pack = createToolpack(probe.name, { lang: probe.lang, dir }).dir;
    writeFileSync(path.join(pack, probe.file), readFileSync(path.join(root, probe.source)));
    // The artifact marked as one, so the template's budgets per input MiB apply to the probe too.
    const input = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['artifact'],
      properties: { artifact: { type: 'string', 'x-helix-artifact': true }, mode: { type: 'string' } },
    };
    writeFileSync(path.join(pack, 'schemas', 'input.json'), JSON.stringify(input));
    writeFileSync(
      path.join(pack, 'schemas', 'output.json'),
      JSON.stringify({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' }),
    );
    // A probe writes nothing: no declared output.
    const manifest = path.join(pack, `${probe.name}.tool.yaml`);
    const { declaredOutputs: _none, ...fields } = parse(readFileSync(manifest, 'utf8')) as Record<string, unknown>;
    writeFileSync(manifest, stringify(fields));
  }
  for (const name of ['tpl-c', 'tpl-as', 'probe-c', 'probe-as']) await buildToolpack(path.join(dir, name));
}

interface Measured {
  fuelPerByte: number;
  mbPerSecond: number;
  pages: number;
  output: Record<string, unknown>;
}

/** One call of `tool` on `data` in a fresh store under `packs`. */
export async function measure(packs: string, tool: string, data: Buffer, input: Record<string, unknown>, field: string): Promise<Measured> {
  const home = mkdtempSync(path.join(tmpdir(), 'helix-bench-reader-'));
  const host = await createHost({ toolpacksDir: packs, home });
  try {
    const artifact = await host.artifacts.importInline(data, { label: 'reads', maxBytes: data.length });
    const response = await host.call({ tool_id: tool, input: { ...input, [field]: artifact.id } });
    if (response.status !== 'success' || response.metrics === undefined)
      throw new Error(`${tool}: ${response.error?.code ?? response.status}: ${response.error?.message ?? ''}`);
    const { fuel_used, duration_ms, memory_peak_pages } = response.metrics;
    return {
      fuelPerByte: fuel_used / data.length,
      mbPerSecond: data.length / 1e6 / (Math.max(duration_ms, 0.001) / 1000),
      pages: memory_peak_pages,
      output: (response.output ?? {}) as Record<string, unknown>,
    };
  } finally {
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}

/** The rows on one file: readers and templates, C against AS, the calls alternated. */
async function fileRows(packs: string, format: 'fasta' | 'fastq', data: Buffer, repeats: number): Promise<Row[]> {
  const label = `${sizeText(data.length)} ${format === 'fasta' ? '60-column FASTA' : 'FASTQ of 100-150 base reads'}`;
  const c: Measured[] = [];
  const as: Measured[] = [];
  for (let i = 0; i < repeats; i++) {
    c.push(await measure(packs, 'probe.c', data, { mode: 'parts' }, 'artifact'));
    as.push(await measure(packs, 'probe.as', data, { mode: 'seq' }, 'artifact'));
    if (c[i]!.output.records !== as[i]!.output.records || c[i]!.output.sequence !== as[i]!.output.sequence)
      throw new Error(`the readers disagree on ${format}: C ${JSON.stringify(c[i]!.output)}, AS ${JSON.stringify(as[i]!.output)}`);
  }
  const cTemplate = await measure(packs, 'tpl.c', data, {}, 'sequences');
  const asTemplate = await measure(packs, 'tpl.as', data, {}, 'sequences');
  if (cTemplate.output.total_length !== asTemplate.output.total_length) throw new Error(`the templates disagree on ${format}`);
  return [
    makeRow({
      id: `reader.${format}.fuel`,
      name: `helix_seq_next_part (C) on ${label}, parts only`,
      unit: 'fuel/byte',
      figure: c[0]!.fuelPerByte,
      baseline: { name: 'SeqReader.next (AssemblyScript)', figure: as[0]!.fuelPerByte },
      target: { of: 'ratio', op: '<=', value: 1 },
      samples: 1,
    }),
    makeRow({
      id: `reader.${format}.speed`,
      name: `helix_seq_next_part (C) on ${label}, inside the tool`,
      unit: 'MB/s',
      figure: median(c.map((m) => m.mbPerSecond)),
      baseline: { name: 'SeqReader.next (AssemblyScript)', figure: median(as.map((m) => m.mbPerSecond)) },
      samples: repeats,
    }),
    makeRow({
      id: `template.${format}.fuel`,
      name: `the C template (helix new --lang c) on ${label}`,
      unit: 'fuel/byte',
      figure: cTemplate.fuelPerByte,
      baseline: { name: 'the AssemblyScript template', figure: asTemplate.fuelPerByte },
      target: { of: 'ratio', op: '<=', value: 1 },
      samples: 1,
    }),
    makeRow({
      id: `template.${format}.pages`,
      name: `memory_peak_pages of the C template on ${label}`,
      unit: 'pages',
      figure: cTemplate.pages,
      baseline: { name: 'the AssemblyScript template', figure: asTemplate.pages },
      samples: 1,
    }),
  ];
}

/** The reader section: 8 MiB files in the quick mode, 32 MiB otherwise (BENCH_READER_SIZE in bytes overrides). */
export async function readerRows(config: BenchConfig): Promise<Row[]> {
  const size = Number(process.env.BENCH_READER_SIZE) || (config.mode === 'quick' ? 8 : 32) * 2 ** 20;
  const repeats = Math.max(config.repeats, 3);
  const packs = mkdtempSync(path.join(tmpdir(), 'helix-bench-packs-'));
  try {
    await makePacks(packs);
    const rows: Row[] = [];
    for (const format of ['fasta', 'fastq'] as const) {
      try {
        rows.push(...(await fileRows(packs, format, format === 'fasta' ? benchFasta(size) : benchFastq(size), repeats)));
      } catch (e) {
        rows.push(failedRow({ id: `reader.${format}`, name: `the readers on ${format}`, unit: '-' }, e));
      }
    }
    return rows;
  } finally {
    rmSync(packs, { recursive: true, force: true });
  }
}
