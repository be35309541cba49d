// The guide's walk from `helix new --bare` to a tool on a multi-GB file (sdk-guest/GUIDE.md, "A
// tool on a multi-GB file"), run as written: its `sh` block, read from the guide, runs in a
// temporary directory outside the repository with `helix` on the PATH (the built CLI), under
// the embedded default policy (C's template tool reads 10 GB in test/template-big-data.test.ts).
// The call must answer the figures the guide states, from a 3 GB file, in memory far below it.
import { execFile } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const guide = readFileSync(path.join(packageRoot(), 'sdk-guest', 'GUIDE.md'), 'utf8');
const work = tempDir('helix-guide-walk-');
afterAll(() => work.cleanup());

/** The walk's `sh` block: the first after the section's heading. */
function walkBlock(): string {
  const section = guide.indexOf('### A tool on a multi-GB file');
  expect(section).toBeGreaterThan(0);
  const start = guide.indexOf('```sh\n', section) + '```sh\n'.length;
  return guide.slice(start, guide.indexOf('```', start));
}

/** A figure the guide's prose states, e.g. `"bytes":3171000000`. */
function stated(field: string): number {
  const section = guide.slice(guide.indexOf('### A tool on a multi-GB file'));
  return Number(new RegExp(`"${field}":(\\d+)`).exec(section)?.[1]);
}

describe("the guide's walk to a multi-GB file", () => {
  it('starts from helix new --bare and ends in a call on the generated file', () => {
    const lines = walkBlock().trim().split('\n');
    expect(lines[0]).toBe('helix new my-tool --bare && cd my-tool');
    expect(lines.at(-1)).toMatch(/^helix call my\.tool .*"@file:big\.txt"/);
    expect(stated('bytes')).toBeGreaterThan(2 * 1024 ** 3);
  });

  for (const lang of ['as']) {
    it(`--lang ${lang}: runs as written and reads the 3 GB file, its figures as the guide states`, async () => {
      const dir = path.join(work.dir, lang);
      const bin = path.join(work.dir, 'bin');
      mkdirSync(dir, { recursive: true });
      mkdirSync(bin, { recursive: true });
      writeFileSync(
        path.join(bin, 'helix'),
        `#!/bin/sh\nexec "${process.execPath}" "${path.join(packageRoot(), 'dist', 'cli', 'main.js')}" "$@"\n`,
      );
      chmodSync(path.join(bin, 'helix'), 0o755);
      const script = lang === 'as' ? walkBlock() : walkBlock().replace('--bare', '--bare --lang c');
      const { stdout, stderr } = await run('sh', ['-e', '-c', script], {
        cwd: dir,
        env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, HELIX_HOME: path.join(dir, 'home') },
        maxBuffer: 64 << 20,
      });
      const last = stdout.trim().split('\n').at(-1)!;
      const r = ResponseEnvelopeSchema.parse(JSON.parse(last));
      process.stdout.write(`guide walk (${lang}): ${JSON.stringify(r.output)} ${JSON.stringify(r.metrics)}\n`);
      expect(r.status, last).toBe('success');
      expect(r.output).toEqual({ bytes: stated('bytes'), lines: stated('lines') });
      expect(stderr).toMatch(/helix: imported big\.txt as art_\w+ for \/file/);
      // One piece at a time: a few MiB of linear memory for a 3 GB file.
      expect(r.metrics.memory_peak_pages).toBeLessThan(256);
    }, 1_800_000);
  }
});
