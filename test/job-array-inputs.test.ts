// A job array over one input of a tool that takes two artifacts (abi/ABI.md, ABI-FANOUT-007): the
// input every element shares is stored once (hard links from element 0), the one fanned over once
// per element, and an element built so runs on its own store and comes back like any other.
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { submitJobArray } from '../host/6-faces/fanout/job-array.js';
import { createHost, type Host } from '../host/5-host/host.js';
import { echoModule } from './helpers/guest-wat.js';
import { runCli } from './helpers/run-cli.js';
import { toolpacksDir } from './helpers/toolpack.js';

// A node process loads the toolpack and compiles its module: seconds on a loaded machine.
const RUN_BOUND_MS = 120_000;

const PAIR_INPUT = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['reads', 'reference'],
  properties: { reads: { type: 'string', 'x-helix-artifact': true }, reference: { type: 'string', 'x-helix-artifact': true } },
};

let root: string;
let plugins: { dir: string; cleanup: () => void };
let host: Host;

beforeAll(async () => {
  root = mkdtempSync(path.join(tmpdir(), 'helix-job-array-'));
  plugins = await toolpacksDir([{ id: 'test.pair', module: echoModule(), inputSchema: PAIR_INPUT }]);
  host = await createHost({ toolpacksDir: plugins.dir, home: path.join(root, 'submit') });
}, RUN_BOUND_MS);

afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  rmSync(root, { recursive: true, force: true });
});

describe('a job array over one of two artifact inputs', () => {
  it(
    'stores the shared input once, and each element runs and is collected',
    async () => {
      const reference = await host.artifacts.importInline('>ref\nACGTACGT\n', { type: 'fasta' });
      const reads = await Promise.all(
        [1, 2, 3].map(async (n) => (await host.artifacts.importInline(`>r${n}\n${'ACGT'.repeat(n)}\n`, { type: 'fasta' })).id),
      );
      const dir = path.join(root, 'array');
      const array = await submitJobArray(host, { tool_id: 'test.pair', input: { reference: reference.id } }, '/reads', reads, dir, {
        submit: false,
      });
      expect(array.elements.map((e) => e.artifact_id)).toEqual(reads);
      expect(new Set(array.elements.map((e) => e.run_id)).size).toBe(3);

      const shared = array.elements.map((e) => statSync(path.join(dir, String(e.index), 'blobs', reference.sha256)));
      expect(shared.map((s) => s.ino)).toEqual([shared[0]!.ino, shared[0]!.ino, shared[0]!.ino]);
      expect(shared[0]!.nlink).toBe(3);
      const own = array.elements.map(
        (e) => statSync(path.join(dir, String(e.index), 'blobs', host.artifacts.get(e.artifact_id).sha256)).ino,
      );
      expect(new Set(own).size).toBe(3);

      const run = await runCli(['job', 'run', path.join(dir, '2')], tmpdir());
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({
        run_id: array.elements[2]!.run_id,
        output: { reads: reads[2], reference: reference.id },
      });
      expect(await host.jobs.collect(path.join(dir, '2'))).toMatchObject({ outcome: 'imported', status: 'succeeded' });
      expect((await host.runs.verify(array.elements[2]!.run_id)).match).toBe(true);
    },
    RUN_BOUND_MS,
  );
});
