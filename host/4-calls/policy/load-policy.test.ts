import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { HelixError } from '../../../abi/index.js';
import { loadPolicy } from './load-policy.js';

const cleanups: Array<() => void> = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

function policyFile(text: string): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const file = path.join(t.dir, 'helix.policy.yaml');
  writeFileSync(file, text);
  return file;
}

function violationsOf(fn: () => unknown): string[] {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(HelixError);
    expect((err as HelixError).code).toBe('P-PRECOND-POLICY-INVALID');
    return (err as HelixError).details.violations as string[];
  }
  throw new Error('expected the policy to be refused');
}

describe('loadPolicy', () => {
  it('loads the bundled default with the working directory as its only root', () => {
    const p = loadPolicy(undefined, { env: { PWD: '/home/someone/project' } });
    expect(p.source).toBe('(default)');
    expect(p.policy.tools.allow).toEqual(['*']);
    expect(p.policy.paths.importRoots).toEqual(['/home/someone/project']);
    expect(p.hash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('hashes the expanded policy, so the same file under another environment hashes differently', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own placeholder, which loadPolicy expands from the environment
    const file = policyFile('version: 1\ntools: { allow: ["seq.*"] }\npaths: { importRoots: ["${DATA}"] }\n');
    const a = loadPolicy(file, { env: { DATA: '/data/a' } });
    const a2 = loadPolicy(file, { env: { DATA: '/data/a' } });
    const b = loadPolicy(file, { env: { DATA: '/data/b' } });
    expect(a.hash).toBe(a2.hash);
    expect(a.hash).not.toBe(b.hash);
  });

  it('hashes canonically: key order and formatting do not change the hash', () => {
    const x = loadPolicy(policyFile('version: 1\ntools:\n  allow: [a.b]\nceilings: { fuel: 5, timeoutMs: 9 }\n'), { env: {} });
    const y = loadPolicy(policyFile('ceilings: {timeoutMs: 9, fuel: 5}\ntools: {allow: ["a.b"]}\nversion: 1\n'), { env: {} });
    expect(x.hash).toBe(y.hash);
  });

  // biome-ignore lint/suspicious/noTemplateCurlyInString: the test's name shows a policy placeholder
  it('uses a default for an unset variable written ${NAME:-default}', () => {
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own placeholder, which loadPolicy expands from the environment
    const p = loadPolicy(policyFile('version: 1\ntools: { allow: [] }\npaths: { exportRoots: ["${OUT:-/tmp/out}"] }\n'), { env: {} });
    expect(p.policy.paths.exportRoots).toEqual(['/tmp/out']);
  });

  it('lists every violation with its field and line', () => {
    const file = policyFile(
      [
        'version: 2',
        'tools:',
        '  allow: ["Bad Tool"]',
        'ceilings:',
        '  fuel: -1',
        'netwrk: []',
        // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own placeholder, which loadPolicy expands from the environment
        'paths: { importRoots: ["${MISSING}"] }',
        '',
      ].join('\n'),
    );
    const v = violationsOf(() => loadPolicy(file, { env: {} }));
    expect(v.some((s) => s.includes(':1: version:'))).toBe(true);
    expect(v.some((s) => s.includes(':3: tools.allow[0]:'))).toBe(true);
    expect(v.some((s) => s.includes(':5: ceilings.fuel:'))).toBe(true);
    expect(v.some((s) => s.includes('netwrk'))).toBe(true);
    expect(v.some((s) => s.includes('MISSING is not set'))).toBe(true);
    expect(v.length).toBeGreaterThanOrEqual(5);
  });

  it('refuses an allowPrivate entry that is no host, address or range, at load', () => {
    const v = violationsOf(() =>
      loadPolicy(policyFile('version: 1\ntools: { allow: [] }\nnetwork: { allowPrivate: ["10.0.0.0/8", "not a host!"] }\n'), { env: {} }),
    );
    expect(v).toEqual([expect.stringMatching(/network\.allowPrivate\[1\]: "not a host!" is not a host name/)]);
  });

  it('allows no container without a docker section, and keeps the hash of a policy that leaves it out', () => {
    const file = policyFile('version: 1\ntools: { allow: ["seq.*"] }\n');
    const p = loadPolicy(file, { env: {} });
    expect(p.policy.docker).toBeUndefined();
    const empty = loadPolicy(policyFile('version: 1\ntools: { allow: ["seq.*"] }\ndocker: {}\n'), { env: {} }).policy.docker!;
    expect(empty.images).toEqual([]);
    expect(empty.tools).toEqual({});
    expect(empty.ceilings).toMatchObject({ memoryBytes: 512 * 1024 * 1024, cpus: 1, pids: 128, timeoutMs: 60_000 });
  });

  it('refuses a docker image by tag, host network and a ceiling out of range, each with its line', () => {
    const id = `sha256:${'a'.repeat(64)}`;
    const text = [
      'version: 1',
      'tools: { allow: ["*"] }',
      'docker:',
      `  images: ["${id}", "biocontainers/seqkit:2.8.0", "quay.io/biocontainers/seqkit@sha256:${'b'.repeat(64)}"]`,
      '  tools:',
      `    seq.stats: { images: ["sha256:${'c'.repeat(64)}"], network: host }`,
      '  ceilings: { cpus: 0 }',
      '',
    ].join('\n');
    const v = violationsOf(() => loadPolicy(policyFile(text), { env: {} }));
    expect(v).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/:4: docker\.images\[1\]: must be an image id sha256:<64 hex> or repository@sha256:<64 hex>, never a tag/),
        expect.stringMatching(/:6: docker\.tools\.seq\.stats\.network:/),
        expect.stringMatching(/:7: docker\.ceilings\.cpus:/),
      ]),
    );
    expect(v.some((s) => s.includes('docker.images[2]'))).toBe(false);
  });

  it('refuses a tool pattern in docker.tools and a tool image that is not on docker.images', () => {
    const text = `version: 1\ntools: { allow: ["*"] }\ndocker:\n  images: []\n  tools:\n    "seq.*": {}\n    seq.stats: { images: ["sha256:${'c'.repeat(64)}"] }\n`;
    const v = violationsOf(() => loadPolicy(policyFile(text), { env: {} }));
    expect(v).toEqual([
      expect.stringMatching(/:6: docker\.tools\.seq\.\*: "seq\.\*" must be an exact tool id \(no wildcard: docker\.run is privileged\)/),
      expect.stringMatching(/:7: docker\.tools\.seq\.stats\.images\[0\]: sha256:c+ is not on docker\.images; add it there first/),
    ]);
  });

  it('refuses YAML that does not parse, and a file that does not exist', () => {
    expect(violationsOf(() => loadPolicy(policyFile('version: [1\n'), { env: {} }))[0]).toMatch(/invalid YAML/);
    expect(violationsOf(() => loadPolicy('/nonexistent/helix.policy.yaml', { env: {} }))[0]).toMatch(/cannot read the policy file/);
  });
});
