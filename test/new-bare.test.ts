// `helix new --bare` for each language, as sdk-guest/GUIDE.md shows it (section 2's `--bare`
// block, read from the guide and run as written through the built CLI in a temporary directory
// outside the repository): the skeleton builds, passes `helix test` as made, and is called on
// its data file through "@file:"; then on a generated file of several MiB, which its base
// budgets alone could not read, so the call shows `limits.perInputMiB` carries it.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { TEMPLATE_LANGS } from '../cli/new-command.js';
import { packageRoot } from '../host/1-base/paths.js';
import { digestOf, tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const cli = path.join(packageRoot(), 'dist', 'cli', 'main.js');
const guide = readFileSync(path.join(packageRoot(), 'sdk-guest', 'GUIDE.md'), 'utf8');

const work = tempDir('helix-bare-');
afterAll(() => work.cleanup());

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

async function helix(args: string[], cwd: string, home: string): Promise<Ran> {
  try {
    const { stdout, stderr } = await run(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, HELIX_HOME: home },
      maxBuffer: 16 << 20,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

/** The guide's `--bare` commands: the `sh` block that starts with `helix new ... --bare`, split at `&&`. */
function bareCommands(): string[][] {
  const start = guide.indexOf('```sh\nhelix new my-tool --bare');
  expect(start).toBeGreaterThan(0);
  const block = guide.slice(start + '```sh\n'.length, guide.indexOf('```', start + 5));
  return block
    .trim()
    .split(/\n| && /)
    .map((line) => [...line.matchAll(/'([^']*)'|(\S+)/g)].map((m) => m[1] ?? m[2]!));
}

interface Manifest {
  digest: string;
  module: string;
  limits: { fuel: number; maxCapabilityCalls: number; perInputMiB: { fuel: number; maxCapabilityCalls: number; timeoutMs: number } };
}

describe('helix new --bare, as the guide shows it', () => {
  it('is new, cd, build, test and a call with @file:', () => {
    expect(bareCommands().map((w) => w.slice(0, 2).join(' '))).toEqual([
      'helix new',
      'cd my-tool',
      'helix build',
      'helix test',
      'helix call',
    ]);
  });

  for (const lang of TEMPLATE_LANGS) {
    it(`--lang ${lang}: builds, passes its fixtures, counts its data file and a file beyond its base budgets`, async () => {
      const parent = path.join(work.dir, lang);
      const home = path.join(work.dir, `${lang}-home`);
      mkdirSync(parent);
      let cwd = parent;
      let called: Ran | undefined;
      for (const words of bareCommands()) {
        if (words[0] === 'cd') {
          cwd = path.join(cwd, words[1]!);
          continue;
        }
        const args = words[1] === 'new' ? [...words.slice(1), '--lang', lang] : words.slice(1);
        const r = await helix(args, cwd, home);
        expect(r.code, `helix ${args.join(' ')}\n${r.stdout}${r.stderr}`).toBe(0);
        if (args[0] === 'new') expect(r.stdout).toMatch(/ bare skeleton, tool my\.tool\)\n/);
        if (args[0] === 'test') {
          expect(r.stdout).toMatch(/^ok {4}my\.tool count\.json \(fuel \d+\)$/m);
          expect(r.stdout).toMatch(/^ok {4}my\.tool missing-input\.json/m);
          expect(r.stdout).toMatch(/^2 passed, 0 failed \(2 fixtures, 1 toolpack\)$/m);
        }
        if (args[0] === 'call') called = r;
      }
      const manifest = parseYaml(readFileSync(path.join(cwd, 'my-tool.tool.yaml'), 'utf8')) as Manifest;
      expect(manifest.digest).toBe(digestOf(readFileSync(path.join(cwd, manifest.module))));
      expect(ResponseEnvelopeSchema.parse(JSON.parse(called!.stdout))).toMatchObject({
        status: 'success',
        output: { bytes: 46, lines: 3 },
      });
      expect(called!.stderr).toMatch(/^helix: imported data\/example\.txt as art_\w{26} for \/file$/m);

      // 12 MiB of 1-byte lines: more reads than the base maxCapabilityCalls allows for every
      // language, and (but for C) more fuel than the base fuel.
      const lines = 6 * 1024 * 1024;
      writeFileSync(path.join(cwd, 'big.txt'), 'A\n'.repeat(lines));
      const big = await helix(['call', 'my.tool', '--toolpacks', '.', '--input', '{"file":"@file:big.txt"}', '--compact'], cwd, home);
      expect(big.code, big.stdout).toBe(0);
      const response = ResponseEnvelopeSchema.parse(JSON.parse(big.stdout));
      expect(response.output).toEqual({ bytes: 2 * lines, lines });
      expect(manifest.limits.maxCapabilityCalls).toBeLessThan(13);
      if (lang !== 'c') expect(response.metrics.fuel_used).toBeGreaterThan(manifest.limits.fuel);
      // Within the budget the rates give 12 MiB, with the room the manifest's comments promise.
      expect(response.metrics.fuel_used).toBeLessThan((manifest.limits.fuel + 12 * manifest.limits.perInputMiB.fuel) * 0.85);
    }, 240_000);
  }
});
