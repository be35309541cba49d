// slurm.submit's plan: the tool's entry and its narrower lists, the job's name, comment and
// directory from the run and the call, and the work root checked before anything is written.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PolicySchema, type PolicyInput } from '../abi/index.js';
import { refusalOf } from '../test/helpers/refusal.js';
import { planSlurmSubmit, SlurmSubmitArgsSchema } from './slurm-request.js';
import { slurmSubmit } from './slurm-submit.js';
import { prepareJobDir } from './slurm-workspace.js';
import type { CapabilityContext } from './types.js';

const RUN = `run_${'a'.repeat(32)}`;

function policy(slurm?: PolicyInput['slurm']) {
  return PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ...(slurm === undefined ? {} : { slurm }) });
}
const granted = policy({
  partitions: ['debug', 'long'],
  workRoot: '/srv/jobs',
  tools: { 'seq.stats': {}, 'seq.long': { partitions: ['long'] } },
});

function plan(args: Record<string, unknown>, toolId = 'seq.stats', p = granted, callSeq = 3) {
  return planSlurmSubmit(SlurmSubmitArgsSchema.parse({ argv: ['/bin/true'], ...args }), { toolId, runId: RUN, callSeq, policy: p });
}

describe('planSlurmSubmit', () => {
  it('names the job and its directory after the run and the call (its number, or the key)', () => {
    expect(plan({})).toMatchObject({
      call: 'c3',
      jobName: `helix.${RUN}.c3`,
      comment: `helix:seq.stats:${RUN}:c3`,
      dir: `/srv/jobs/${RUN}.c3`,
    });
    expect(plan({ key: 'align-1' })).toMatchObject({
      call: 'k-align-1',
      jobName: `helix.${RUN}.k-align-1`,
      dir: `/srv/jobs/${RUN}.k-align-1`,
    });
    expect(plan({}).script).toContain("#SBATCH --partition='debug'\n");
  });

  it('refuses file names that are not plain, and two inputs or two outputs of one name, whatever its case', () => {
    const art = `art_${'0'.repeat(26)}`;
    expect(refusalOf(() => plan({ inputs: [{ artifact_id: art, name: '../x' }] }))).toMatchObject({
      code: 'I-REQ-SLURM-FILE-NAME',
      details: { pointer: '/inputs/0/name' },
    });
    expect(refusalOf(() => plan({ outputs: [{ name: '.hidden' }] }))).toMatchObject({
      code: 'I-REQ-SLURM-FILE-NAME',
      details: { pointer: '/outputs/0/name' },
    });
    expect(refusalOf(() => plan({ outputs: [{ name: 'R.txt' }, { name: 'r.txt' }] }))).toMatchObject({
      code: 'I-REQ-SLURM-FILE-NAME',
      details: { pointer: '/outputs/1/name', problem: 'another of the outputs has the same name (ignoring case)' },
    });
    expect(plan({ inputs: [{ artifact_id: art, name: 'r.txt' }], outputs: [{ name: 'r.txt' }] }).outputs).toEqual([{ name: 'r.txt' }]);
  });

  it("refuses a tool without an entry, and a partition outside the tool's narrower list", () => {
    expect(refusalOf(() => plan({}, 'seq.other'))).toMatchObject({ code: 'A-AUTH-SLURM-TOOL', details: { tool: 'seq.other' } });
    expect(refusalOf(() => plan({}, 'seq.stats', policy()))).toMatchObject({ code: 'A-AUTH-SLURM-TOOL' });
    expect(refusalOf(() => plan({ partition: 'debug' }, 'seq.long'))).toMatchObject({
      code: 'A-AUTH-SLURM-PARTITION',
      details: { allowed: ['long'] },
    });
    expect(plan({}, 'seq.long').script).toContain("#SBATCH --partition='long'\n");
  });

  it('refuses a policy without a work root, after every other check', () => {
    const rootless = policy({ partitions: ['debug'], tools: { 'seq.stats': {} } });
    expect(refusalOf(() => plan({}, 'seq.stats', rootless))).toMatchObject({ code: 'P-PRECOND-SLURM-WORK-ROOT' });
    expect(refusalOf(() => plan({ partition: 'gpu' }, 'seq.stats', rootless))).toMatchObject({ code: 'A-AUTH-SLURM-PARTITION' });
  });
});

describe('prepareJobDir', () => {
  const never = { artifacts: {} as never, signal: new AbortController().signal };

  it('refuses a work root that is missing or reached through a symbolic link, writing nothing', async () => {
    const t = mkdtempSync(path.join(tmpdir(), 'helix-slurm-root-'));
    try {
      const at = (root: string) =>
        planSlurmSubmit(SlurmSubmitArgsSchema.parse({ argv: ['/bin/true'] }), {
          toolId: 'seq.stats',
          runId: RUN,
          callSeq: 1,
          policy: policy({ workRoot: root, tools: { 'seq.stats': {} } }),
        });
      await expect(prepareJobDir(at(path.join(t, 'missing')), never)).rejects.toMatchObject({ code: 'P-PRECOND-SLURM-WORK-ROOT' });
      symlinkSync(t, path.join(t, 'link'));
      await expect(prepareJobDir(at(path.join(t, 'link')), never)).rejects.toMatchObject({
        code: 'P-PRECOND-SLURM-WORK-ROOT',
        message: expect.stringContaining('symbolic link'),
      });
    } finally {
      rmSync(t, { recursive: true, force: true });
    }
  });
});

describe('slurm.submit and its work root', () => {
  it('refuses a work root reached through a symbolic link before any Slurm command runs (ABI-SLURM-007)', async () => {
    const t = mkdtempSync(path.join(tmpdir(), 'helix-slurm-root-'));
    const savedPath = process.env.PATH;
    try {
      // squeue, sacct and sbatch stand-ins that record being run: none may be.
      const bin = path.join(t, 'bin');
      mkdirSync(bin);
      for (const command of ['squeue', 'sacct', 'sbatch', 'scancel']) {
        writeFileSync(path.join(bin, command), `#!/bin/sh\necho ${command} >> '${path.join(t, 'ran.log')}'\nexit 0\n`, { mode: 0o755 });
      }
      process.env.PATH = `${bin}:${savedPath ?? ''}`;
      mkdirSync(path.join(t, 'real'));
      symlinkSync(path.join(t, 'real'), path.join(t, 'link'));
      const ctx = {
        toolId: 'seq.stats',
        runId: RUN,
        callSeq: 1,
        policy: policy({ workRoot: path.join(t, 'link'), tools: { 'seq.stats': {} } }),
        artifacts: { stat: () => undefined },
        checkpoints: { get: () => undefined, put: async () => undefined },
        signal: new AbortController().signal,
      } as unknown as CapabilityContext;
      await expect(slurmSubmit.invoke(slurmSubmit.args.parse({ argv: ['/bin/true'] }), ctx)).rejects.toMatchObject({
        code: 'P-PRECOND-SLURM-WORK-ROOT',
      });
      expect(existsSync(path.join(t, 'ran.log'))).toBe(false);
      expect(readdirSync(path.join(t, 'real'))).toEqual([]);
    } finally {
      process.env.PATH = savedPath;
      rmSync(t, { recursive: true, force: true });
    }
  });
});
