// Container toolpacks against the real dockerd of scripts/services.sh (ABI-CONTAINER-*): the bundled
// seqkit.stats offered only once the policy pins its image and grants it, agreeing with the WASM
// seq.stats on the same files, its table and stderr kept as the run's artifacts, replayed without a
// new container; a container tool writing a declared output file; a failing, a memory-killed and a
// late command; placeholder values that could inject refused before any container exists.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema, type ResponseEnvelope } from '../abi/index.js';
import { LABEL_RUN } from '../capabilities/docker-container.js';
import { createHost, type Host } from '../host/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { containersCreated, eventsSince, UP_BOUND_MS, upDocker, CALL_BOUND_MS } from './helpers/docker-services.js';
import { serveInMemory } from './helpers/mcp-memory.js';
import { runCli } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

const FASTA = '>a desc\nACGTACGTGGNN\nACG\n>b\nGGCC\n>c\nAT-GC.ATTA\n';
const home = tempDir('helix-home-');
const plugins = tempDir('helix-plugins-');
let host: Host;
let image: string;
let policyFile: string;

// What a container tool's process sees of its confinement, as one TSV row.
const PROBE = [
  'w() { touch "$1" 2>/dev/null && echo rw || echo ro; }',
  'printf "uid\\tgid\\troot\\ttmp\\twork_in\\twork_out\\twork\\tnet\\tcap_eff\\tcap_bnd\\tno_new_privs\\n"',
  'printf "%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\t%s\\n" "$(id -u)" "$(id -g)" "$(w /x)" "$(w /tmp/x)" "$(w /work/in/x)" "$(w /work/out/x)" "$(w /work/x)" "$(ls /sys/class/net | tr "\\n" " ")" "$(grep CapEff /proc/self/status | cut -f2)" "$(grep CapBnd /proc/self/status | cut -f2)" "$(grep NoNewPrivs /proc/self/status | cut -f2)"',
].join('; ');

/** FASTQ reads of varied lengths, bases and qualities, deterministic. */
function fastq(reads: number): string {
  let seed = 7;
  const next = (n: number) => {
    seed = (seed * 1103515245 + 12345) % 2 ** 31;
    return seed % n;
  };
  const lines: string[] = [];
  for (let i = 0; i < reads; i++) {
    const len = 20 + next(130);
    const seq = Array.from({ length: len }, () => 'ACGTN'[next(5)]).join('');
    const qual = Array.from({ length: len }, () => String.fromCharCode(33 + next(41))).join('');
    lines.push(`@r${i}`, seq, '+', qual);
  }
  return `${lines.join('\n')}\n`;
}

/** A container toolpack written into the test's toolpacks directory. */
function containerPack(
  id: string,
  manifest: Record<string, unknown>,
  inputSchema: unknown = {
    type: 'object',
    required: ['sequences'],
    properties: { sequences: { type: 'string', 'x-helix-artifact': true } },
  },
): void {
  const dir = path.join(plugins.dir, id);
  cpSync(path.join(packageRoot(), 'plugins', 'seqkit-stats', 'schemas'), path.join(dir, 'schemas'), { recursive: true });
  const full = {
    kind: 'container',
    id,
    version: '1.0.0',
    contractVersion: 'v1',
    description: `test container tool ${id}`,
    image: 'helix-seqkit:local',
    deterministic: 'pure',
    timeoutMs: CALL_BOUND_MS,
    limits: { maxInputBytes: 4096, maxOutputBytes: 65536 },
    inputSchema,
    outputSchema: { type: 'object' },
    ...manifest,
  };
  writeFileSync(path.join(dir, `${id.replace('.', '-')}.tool.yaml`), JSON.stringify(full, null, 2));
}

beforeAll(async () => {
  image = await upDocker();
  // The bundled packs compared, as shipped, beside the test's own container packs.
  for (const pack of ['seqkit-stats', 'seq-stats'])
    cpSync(path.join(packageRoot(), 'plugins', pack), path.join(plugins.dir, pack), { recursive: true });
  containerPack(
    'c.revcomp',
    {
      argv: [
        'seqkit',
        'seq',
        '--reverse',
        '--complement',
        '--seq-type',
        'dna',
        '--line-width',
        '{{params.width}}',
        '{{inputs.sequences}}',
        '--out-file',
        '{{outputs.revcomp}}',
      ],
      declaredOutputs: [{ role: 'revcomp', type: 'fasta', file: 'revcomp.fa' }],
    },
    {
      type: 'object',
      required: ['sequences', 'width'],
      properties: { sequences: { type: 'string', 'x-helix-artifact': true }, width: { type: 'integer', minimum: 0 } },
    },
  );
  containerPack(
    'c.grep',
    {
      argv: ['seqkit', 'grep', '--by-seq', '--pattern', '{{params.pattern}}', '{{inputs.sequences}}'],
    },
    {
      type: 'object',
      required: ['sequences', 'pattern'],
      properties: { sequences: { type: 'string', 'x-helix-artifact': true }, pattern: { type: 'string' } },
    },
  );
  containerPack('c.fail', { argv: ['/bin/busybox', 'sh', '-c', 'echo boom >&2; exit 3'] }, { type: 'object' });
  containerPack(
    'c.hog',
    {
      argv: ['/bin/busybox', 'sh', '-c', 'x=$(head -c 200m /dev/zero | tr "\\0" a); echo survived'],
      limits: { maxInputBytes: 4096, maxOutputBytes: 65536, memoryBytes: 32 * 1024 * 1024 },
    },
    { type: 'object' },
  );
  containerPack('c.sleep', { argv: ['/bin/busybox', 'sleep', '600'] }, { type: 'object' });
  // A deadline that grows with the data (ABI-BUDGET-001): 800 ms and 1500 per MiB of input.
  containerPack('c.grow', {
    argv: ['/bin/busybox', 'sleep', '600'],
    timeoutMs: 800,
    limits: { maxInputBytes: 4096, maxOutputBytes: 65536, perInputMiB: { timeoutMs: 1500 } },
  });
  containerPack('c.probe', { argv: ['/bin/busybox', 'sh', '-c', PROBE], stdout: { format: 'tsv' } }, { type: 'object' });
  const tools = ['seqkit.stats', 'c.revcomp', 'c.grep', 'c.fail', 'c.hog', 'c.sleep', 'c.grow', 'c.probe'];
  policyFile = path.join(home.dir, 'policy.yaml');
  writeFileSync(
    policyFile,
    JSON.stringify({
      version: 1,
      tools: { allow: ['*'] },
      grants: { '*': ['artifact.*'], ...Object.fromEntries(tools.map((t) => [t, ['docker.run']])) },
      docker: {
        images: [image],
        pins: { 'helix-seqkit:local': image },
        tools: Object.fromEntries(tools.map((t) => [t, {}])),
        ceilings: { pids: 64 },
      },
    }),
  );
  host = await createHost({ toolpacksDir: plugins.dir, policyFile, home: home.dir });
}, UP_BOUND_MS + 120_000);
afterAll(async () => {
  await host?.close();
  plugins.cleanup();
  home.cleanup();
});

/** One call; its envelope and the containers the engine created for its run. */
async function call(
  toolId: string,
  input: Record<string, unknown>,
  constraints: Record<string, unknown> = {},
): Promise<{ r: ResponseEnvelope; created: number }> {
  const since = eventsSince();
  const r = ResponseEnvelopeSchema.parse(await host.call({ tool_id: toolId, input, constraints }));
  return { r, created: await containersCreated(r.run_id!, since) };
}

const SEQ_STATS_OF_SEQKIT: Record<string, string> = {
  format: 'format',
  num_seqs: 'num_seqs',
  sum_len: 'sum_len',
  min_len: 'min_len',
  avg_len: 'avg_len',
  max_len: 'max_len',
  Q1: 'q1',
  Q2: 'q2',
  Q3: 'q3',
  sum_gap: 'sum_gap',
  N50: 'n50',
  'Q20(%)': 'q20_pct',
  'Q30(%)': 'q30_pct',
  'GC(%)': 'gc_pct',
};

describe('container toolpacks', () => {
  it('offers seqkit.stats only under a policy that pins its image and grants it docker.run', async () => {
    const ids = (h: Host) => h.tools().map((t) => t.id);
    expect(ids(host)).toContain('seqkit.stats');
    expect(host.tools().find((t) => t.id === 'seqkit.stats')).toMatchObject({
      kind: 'container',
      capabilities: ['docker.run'],
      moduleDigest: null,
    });
    const bare = tempDir('helix-home-');
    const defaults = await createHost({ toolpacksDir: plugins.dir, home: bare.dir });
    try {
      expect(ids(defaults)).not.toContain('seqkit.stats');
      expect(ids(defaults)).toContain('seq.stats');
      const r = ResponseEnvelopeSchema.parse(await defaults.call({ tool_id: 'seqkit.stats', input: {} }));
      expect(r.error?.code).toBe('C-CONTRACT-TOOL-UNKNOWN');
    } finally {
      await defaults.close();
      bare.cleanup();
    }
  });

  it(
    'agrees with the WASM seq.stats on FASTA, FASTQ and gzip FASTQ',
    async () => {
      const files = { fasta: FASTA, fastq: fastq(300), gzip: gzipSync(fastq(200)) };
      for (const [name, data] of Object.entries(files)) {
        const id = (await host.artifacts.importInline(data, { label: name })).id;
        const container = await call('seqkit.stats', { sequences: id });
        const wasm = await call('seq.stats', { sequences: id });
        expect(container.r.status, JSON.stringify(container.r.error)).toBe('success');
        expect(wasm.r.status).toBe('success');
        const row = (container.r.output as { rows: Array<Record<string, unknown>> }).rows[0]!;
        const ours = wasm.r.output as Record<string, unknown>;
        for (const [column, field] of Object.entries(SEQ_STATS_OF_SEQKIT))
          expect([name, column, row[column]]).toEqual([name, column, ours[field]]);
        expect(row.num_seqs).toBeGreaterThan(2);
      }
    },
    CALL_BOUND_MS * 3,
  );

  it(
    'keeps the table and stderr as the run artifacts, journals its one docker.run, and replays without a container',
    async () => {
      const id = (await host.artifacts.importInline(fastq(50), { label: 'replay.fq' })).id;
      const first = await call('seqkit.stats', { sequences: id });
      expect(first.created).toBe(1);
      const run = host.runs.get(first.r.run_id!)!;
      expect(run).toMatchObject({
        status: 'succeeded',
        tool_id: 'seqkit.stats',
        inputs: [{ role: 'sequences', artifact_id: id }],
        journal: { entries: 1 },
      });
      const roles = Object.fromEntries(run.outputs.map((o) => [o.role, o.artifact_id]));
      expect(Object.keys(roles).sort()).toEqual(['stderr', 'table']);
      const table = (await host.artifacts.readBytes(roles.table!, 1 << 20)).toString();
      expect(table.split('\n')[0]).toBe(
        'file\tformat\ttype\tnum_seqs\tsum_len\tmin_len\tavg_len\tmax_len\tQ1\tQ2\tQ3\tsum_gap\tN50\tQ20(%)\tQ30(%)\tGC(%)',
      );
      expect(table.split('\n')[1]!.split('\t').slice(0, 4)).toEqual(['/work/in/sequences', 'FASTQ', 'DNA', '50']);
      expect(host.artifacts.get(roles.table!)).toMatchObject({ type: 'tsv', created_by_run: first.r.run_id });
      expect(host.artifacts.get(roles.stderr!)).toMatchObject({ type: 'text', size: 0 });
      const again = await call('seqkit.stats', { sequences: id });
      expect(again.r).toMatchObject({ status: 'success', run_id: first.r.run_id, output: first.r.output });
      expect(again.r.warnings.some((w) => w.startsWith('replayed:'))).toBe(true);
      expect(again.created).toBe(0);
    },
    CALL_BOUND_MS,
  );

  it(
    'registers a declared output file the command wrote, with a schema-validated parameter in argv',
    async () => {
      const id = (await host.artifacts.importInline('>x\nAACCGGTTA\n', { label: 'x.fa' })).id;
      const { r } = await call('c.revcomp', { sequences: id, width: 4 });
      expect(r.status, JSON.stringify(r.error)).toBe('success');
      const out = (r.output as { outputs: Record<string, string> }).outputs.revcomp!;
      expect((await host.artifacts.readBytes(out, 1 << 20)).toString()).toBe('>x\nTAAC\nCGGT\nT\n');
      expect(host.runs.get(r.run_id!)!.outputs).toEqual([{ role: 'revcomp', artifact_id: out, sha256: host.artifacts.get(out).sha256 }]);
    },
    CALL_BOUND_MS,
  );

  it(
    'refuses a placeholder value that could inject, before any container exists',
    async () => {
      const id = (await host.artifacts.importInline('>x\nAACC\n', { label: 'y.fa' })).id;
      const cases: Array<[string, RegExp]> = [
        ['ACGT;rm -rf /', /shell metacharacter/],
        ['$(id)', /shell metacharacter/],
        ['`id`', /shell metacharacter/],
        ['A C', /whitespace/],
        ['AC\nGT', /control character/],
        ['--help', /leading dash/],
        ['-v', /leading dash/],
        ['/etc/passwd', /absolute path/],
        ['ACGT/../../etc', /\.\. path segment/],
        ['a|b', /shell metacharacter/],
      ];
      for (const [pattern, reason] of cases) {
        const { r, created } = await call('c.grep', { sequences: id, pattern });
        expect([pattern, r.error?.code]).toEqual([pattern, 'I-REQ-CONTAINER-ARG']);
        expect(r.error!.details).toMatchObject({
          pointer: '/pattern',
          placeholder: '{{params.pattern}}',
          reason: expect.stringMatching(reason),
        });
        expect(created).toBe(0);
      }
      const ok = await call('c.grep', { sequences: id, pattern: 'AAC' });
      expect(ok.r.status).toBe('success');
      expect(ok.created).toBe(1);
    },
    CALL_BOUND_MS,
  );

  it(
    'is called and listed by the CLI like any tool, and its run exports as an RO-Crate',
    async () => {
      // Content of its own: the same bytes would replay an earlier run, linked to the earlier artifact.
      const id = (await host.artifacts.importInline(`${FASTA}>cli\nACGT\n`, { label: 'cli.fa' })).id;
      const called = await runCli([
        'call',
        'seqkit.stats',
        '--toolpacks',
        plugins.dir,
        '--policy',
        policyFile,
        '--home',
        home.dir,
        '--input',
        JSON.stringify({ sequences: id }),
        '--compact',
      ]);
      expect(called.code, called.stderr).toBe(0);
      const r = ResponseEnvelopeSchema.parse(JSON.parse(called.stdout));
      expect(r).toMatchObject({
        status: 'success',
        provenance: { tool_id: 'seqkit.stats', digest: null },
        output: { rows: [{ num_seqs: 4, sum_len: 33 }] },
      });
      const listed = await runCli(['tools', '--toolpacks', plugins.dir, '--policy', policyFile, '--json']);
      expect(
        (JSON.parse(listed.stdout) as Array<{ id: string; kind: string; digest: string }>).find((t) => t.id === 'seqkit.stats'),
      ).toMatchObject({ kind: 'container', digest: image });
      const crate = tempDir('helix-crate-');
      try {
        const exported = await host.runs.exportCrate(r.run_id!, path.join(crate.dir, 'crate'));
        const graph = (
          JSON.parse(readFileSync(path.join(exported.dir, 'ro-crate-metadata.json'), 'utf8')) as {
            '@graph': Array<Record<string, unknown>>;
          }
        )['@graph'];
        expect(JSON.stringify(graph)).toContain('seqkit.stats');
        expect(graph.filter((e) => JSON.stringify(e).includes(id)).length).toBeGreaterThan(0);
      } finally {
        crate.cleanup();
      }
    },
    CALL_BOUND_MS,
  );

  it(
    'is an MCP tool like any other: listed with its schemas, called, its run in _meta',
    async () => {
      const mcpHome = tempDir('helix-home-');
      const served = await serveInMemory({ toolpacksDir: plugins.dir, policyFile, home: mcpHome.dir });
      try {
        const { tools } = await served.client.listTools();
        const listed = tools.find((t) => t.name === 'seqkit-stats')!;
        expect(listed._meta).toMatchObject({ 'helix/tool_id': 'seqkit.stats', 'helix/kind': 'container' });
        // It writes artifacts (its table and stderr): not read-only; idempotent as its manifest says.
        expect(listed.annotations).toMatchObject({
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        });
        expect(listed.inputSchema).toMatchObject({ required: ['sequences'] });
        const id = (await served.host.artifacts.importInline(FASTA, { label: 'mcp.fa' })).id;
        const r = (await served.client.callTool({ name: 'seqkit-stats', arguments: { sequences: id } })) as CallToolResult;
        expect(r.isError).toBeFalsy();
        expect(r.structuredContent).toMatchObject({ rows: [{ num_seqs: 3, sum_len: 29 }] });
        expect(r._meta).toMatchObject({ 'helix/status': 'success', 'helix/replayed': false });
      } finally {
        await served.close();
        mcpHome.cleanup();
      }
    },
    CALL_BOUND_MS,
  );

  it(
    'confines its process as docker.run does: non-root, read-only root and workspace but out/, no network, no capabilities, no new privileges',
    async () => {
      const { r } = await call('c.probe', {});
      expect(r.status, JSON.stringify(r.error)).toBe('success');
      expect(r.output).toEqual({
        rows: [
          {
            uid: 65534,
            gid: 65534,
            root: 'ro',
            tmp: 'rw',
            work_in: 'ro',
            work_out: 'rw',
            work: 'ro',
            net: 'lo ',
            cap_eff: '0000000000000000',
            cap_bnd: '0000000000000000',
            no_new_privs: 1,
          },
        ],
      });
    },
    CALL_BOUND_MS,
  );

  it(
    'fails a command that exits non-zero or is killed for its memory, and one past the call deadline, removing each container',
    async () => {
      const fail = await call('c.fail', {});
      expect(fail.r.error).toMatchObject({ code: 'S-TOOL-CONTAINER-EXIT', details: { exit_code: 3, oom_killed: false, stderr: 'boom\n' } });
      const hog = await call('c.hog', {});
      expect(hog.r.error).toMatchObject({ code: 'S-TOOL-CONTAINER-EXIT', details: { oom_killed: true } });
      const late = await call('c.sleep', {}, { timeout_ms: 1500 });
      expect(late.r.error?.code).toBe('R-TIMEOUT-001');
      expect(late.created).toBe(1);
      for (const { r } of [fail, hog, late])
        expect(await new Docker().listContainers({ all: true, filters: { label: [`${LABEL_RUN}=${r.run_id}`] } })).toEqual([]);
    },
    CALL_BOUND_MS,
  );

  it(
    'grows the deadline of a container tool with its input, as its manifest states',
    async () => {
      const small = (await host.artifacts.importInline('ACGT')).id;
      const mib = (await host.artifacts.importInline(Buffer.alloc(1024 * 1024, 0x41))).id;
      // The container is stopped at the call's deadline: its distance from the call's start is
      // 800 + 1500 x 4 bytes / MiB (801) on 4 bytes, 800 + 1500 on a MiB, plus dispatch.
      const deadlineAfter = async (sequences: string) => {
        const before = Date.now();
        const { r } = await call('c.grow', { sequences });
        expect(r.error?.code).toBe('R-TIMEOUT-001');
        return (r.error?.details.deadline_ms as number) - before;
      };
      const onSmall = await deadlineAfter(small);
      const onMiB = await deadlineAfter(mib);
      expect(onSmall).toBeGreaterThanOrEqual(801);
      expect(onSmall).toBeLessThan(2300);
      expect(onMiB).toBeGreaterThanOrEqual(2300);
      expect(onMiB).toBeLessThan(2300 + 1500);
    },
    CALL_BOUND_MS,
  );
});
