// A container tool's argv bound from its template (ABI-CONTAINER-003, -004): placeholders replaced
// by values, input paths and output paths; a string value that could inject refused with its reason.
import { describe, expect, it } from 'vitest';
import { ContainerManifestSchema, HelixError } from '../../../abi/index.js';
import { bindArgv } from './container-argv.js';

const manifest = ContainerManifestSchema.parse({
  kind: 'container',
  id: 'c.tool',
  version: '1.0.0',
  contractVersion: 'v1',
  description: 'test',
  image: 'helix-seqkit:local',
  argv: [
    'seqkit',
    'seq',
    '--line-width={{params.width}}',
    '{{params.name}}',
    '{{inputs.reads}}',
    '{{inputs.reads}}',
    '--out-file',
    '{{outputs.seqs}}',
    '{{params.flag}}',
  ],
  deterministic: 'pure',
  timeoutMs: 1000,
  limits: { maxInputBytes: 100, maxOutputBytes: 100 },
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object' },
  declaredOutputs: [{ role: 'seqs', type: 'fasta', file: 'seqs.fa' }],
});

function refusal(name: string): HelixError {
  try {
    bindArgv(manifest, { width: 60, name, reads: 'art_1', flag: true });
  } catch (err) {
    return err as HelixError;
  }
  throw new Error(`expected ${JSON.stringify(name)} to be refused`);
}

describe('bindArgv', () => {
  it('replaces each placeholder, inside an entry too, and names each input once', () => {
    expect(bindArgv(manifest, { width: 60, name: 'sample_1.v2', reads: 'art_1', flag: true })).toEqual({
      argv: [
        'seqkit',
        'seq',
        '--line-width=60',
        'sample_1.v2',
        '/work/in/reads',
        '/work/in/reads',
        '--out-file',
        '/work/out/seqs.fa',
        'true',
      ],
      inputs: [{ name: 'reads', artifact_id: 'art_1' }],
    });
  });

  it('refuses a string that could inject, with its reason, and keeps harmless punctuation', () => {
    const cases: Array<[string, string]> = [
      ['a;b', 'a shell metacharacter or whitespace (";")'],
      ['$(id)', 'a shell metacharacter or whitespace ("$")'],
      ['a b', 'a shell metacharacter or whitespace (" ")'],
      ["it's", 'a shell metacharacter or whitespace ("\'")'],
      ['a\u0000b', 'a control character'],
      ['a\tb', 'a control character'],
      ['-rf', 'a leading dash (it would read as an option)'],
      ['/etc/passwd', 'an absolute path'],
      ['x/../../etc', 'a .. path segment'],
      ['..', 'a .. path segment'],
    ];
    for (const [value, reason] of cases) {
      const err = refusal(value);
      expect(err).toBeInstanceOf(HelixError);
      expect([value, err.code, err.details]).toEqual([
        value,
        'I-REQ-CONTAINER-ARG',
        { pointer: '/name', placeholder: '{{params.name}}', reason },
      ]);
    }
    for (const ok of ['a.b', 'x/y', 'k=v', 'a,b:c', 'a..b', 'ACGT-rich', ''])
      expect(bindArgv(manifest, { width: 1, name: ok, reads: 'art_1', flag: false }).argv[3]).toBe(ok);
  });
});
