// The loader's checks of a container toolpack (ABI-CONTAINER-001..003): its shape and its argv
// template, each violation reported at its place, and the host refusing to start on any of them.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { afterEach, describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { formatViolation } from '../../1-base/files/violation.js';
import { loadEveryToolpackOrThrow, loadToolpacks } from './load-toolpacks.js';

const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] }, ceilings: { timeoutMs: 60_000 } });
const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

const INPUT = {
  type: 'object',
  required: ['reads', 'width', 'name', 'loose', 'nested'],
  properties: {
    reads: { type: 'string', 'x-helix-artifact': true },
    width: { type: 'integer' },
    name: { type: 'string' },
    optional: { type: 'string' },
    loose: { enum: ['a', 'b'] },
    nested: { type: 'object' },
  },
};

/** A toolpacks directory holding one container toolpack per manifest (fields over a valid default). */
function plugins(manifests: Array<Record<string, unknown>>): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  manifests.forEach((fields, i) => {
    const dir = path.join(t.dir, `pack${i}`);
    mkdirSync(dir);
    const manifest = {
      kind: 'container',
      id: `c.pack${i}`,
      version: '1.0.0',
      contractVersion: 'v1',
      description: 'test',
      image: 'helix-seqkit:local',
      argv: ['seqkit', 'version'],
      deterministic: 'pure',
      timeoutMs: 120_000,
      limits: { maxInputBytes: 4096, maxOutputBytes: 4096 },
      inputSchema: INPUT,
      outputSchema: { type: 'object' },
      ...fields,
    };
    writeFileSync(path.join(dir, `pack${i}.tool.yaml`), stringify(manifest));
  });
  return t.dir;
}

/** Each violation under `dir` as `file: field: reason`, relative, without its line. */
async function violationLines(dir: string): Promise<string[]> {
  return (await loadToolpacks(dir, policy)).violations.map(formatViolation).map((l) => l.replace(`${dir}/`, '').replace(/:\d+:/, ':'));
}

describe('container toolpacks at load', () => {
  it('loads a valid one, its deadline capped by the policy, with one capability call and no fuel', async () => {
    const { containers, tools, violations } = await loadToolpacks(
      plugins([
        {
          argv: ['seqkit', 'seq', '-w', '{{params.width}}', '--id-regexp={{params.name}}', '{{inputs.reads}}', '-o', '{{outputs.out}}'],
          declaredOutputs: [{ role: 'out', type: 'fasta' }],
        },
      ]),
      policy,
    );
    expect(violations).toEqual([]);
    expect(tools).toEqual([]);
    expect(containers.map((c) => [c.manifest.id, c.limits.timeoutMs, c.limits.maxCapabilityCalls, c.limits.fuel])).toEqual([
      ['c.pack0', 60_000, 1, 0],
    ]);
  });

  it('reports every bad placeholder, log and output at its place', async () => {
    const dir = plugins([
      {
        argv: [
          'x',
          '{{params.missing}}',
          '{{params.optional}}',
          '{{params.reads}}',
          '{{inputs.width}}',
          '{{params.loose}}',
          '{{params.nested}}',
        ],
      },
      {
        argv: ['x', '{{foo}}', '{{params.width', 'a}}b', '{{outputs.nope}}', '{{outputs.log}}'],
        declaredOutputs: [
          { role: 'log_out', type: 'text' },
          { role: 'log', type: 'text' },
        ],
      },
      {
        argv: ['x'],
        declaredOutputs: [
          { role: 'a', type: 'text', file: 'Same.txt' },
          { role: 'b', type: 'text', file: 'same.TXT' },
          { role: 'c', type: 'text', file: 'x' },
        ],
        logs: { stdout: 'c', stderr: 'zzz' },
      },
      { image: 'Not An Image', argv: [], network: 'host' },
    ]);
    expect(await violationLines(dir)).toEqual([
      'pack0/pack0.tool.yaml: argv[1]: {{params.missing}}: the input schema has no property missing',
      'pack0/pack0.tool.yaml: argv[2]: {{params.optional}}: optional must be required by the input schema: an absent value would leave a hole in argv',
      'pack0/pack0.tool.yaml: argv[3]: {{params.reads}}: reads is an artifact id: write {{inputs.reads}}',
      'pack0/pack0.tool.yaml: argv[4]: {{inputs.width}}: width is not an artifact id (x-helix-artifact: true)',
      'pack0/pack0.tool.yaml: argv[5]: {{params.loose}}: loose must have one scalar type (string, integer, number or boolean)',
      'pack0/pack0.tool.yaml: argv[6]: {{params.nested}}: nested must have one scalar type (string, integer, number or boolean)',
      'pack1/pack1.tool.yaml: declaredOutputs[1].role: the role "log" is reserved for the run log',
      'pack2/pack2.tool.yaml: logs.stderr: zzz is not a role of declaredOutputs',
      'pack2/pack2.tool.yaml: declaredOutputs[1].file: the file same.TXT is already the file of declaredOutputs[0]',
      'pack2/pack2.tool.yaml: declaredOutputs[2].file: role c is a log (logs names it): it has no file',
      expect.stringMatching(/^pack3\/pack3\.tool\.yaml: image: must be an image id/),
      expect.stringMatching(/^pack3\/pack3\.tool\.yaml: argv: /),
      'pack3/pack3.tool.yaml: network: unknown field',
    ]);
  });

  it('checks the template once the declared outputs parse', async () => {
    const dir = plugins([
      {
        argv: ['x', '{{foo}}', '{{params.width', 'a}}b', '{{outputs.nope}}', '{{outputs.log_out}}'],
        declaredOutputs: [
          { role: 'log_out', type: 'text' },
          { role: 'out', type: 'text' },
        ],
        logs: { stdout: 'log_out' },
      },
    ]);
    expect(await violationLines(dir)).toEqual([
      'pack0/pack0.tool.yaml: argv[1]: {{foo}} is not {{params.NAME}}, {{inputs.NAME}} or {{outputs.ROLE}}',
      'pack0/pack0.tool.yaml: argv[2]: has an unclosed {{ or a stray }}',
      'pack0/pack0.tool.yaml: argv[3]: has an unclosed {{ or a stray }}',
      'pack0/pack0.tool.yaml: argv[4]: {{outputs.nope}}: nope is not a role of declaredOutputs',
      'pack0/pack0.tool.yaml: argv[5]: {{outputs.log_out}}: log_out is a log, not a file of /work/out',
    ]);
  });

  it('fails closed: one bad container manifest stops the host from loading', async () => {
    const err = await loadEveryToolpackOrThrow(plugins([{}, { argv: ['{{params.missing}}'] }]), policy).catch((e: unknown) => e);
    expect(err).toMatchObject({
      code: 'P-PRECOND-MANIFEST-INVALID',
      details: { violations: [expect.stringContaining('{{params.missing}}: the input schema has no property missing')] },
    });
  });
});
