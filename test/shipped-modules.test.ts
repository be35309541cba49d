// The modules shipped in plugins/*/build/ as git holds them (the index: HEAD plus what is
// staged): each is tracked and hashes to the digest its tracked manifest carries, so an install
// without a compiler can keep it. The test command's build rewrites the working tree's copies,
// so only git's copy can show a module that was rebuilt but not committed. A container toolpack
// (kind: container) has no module.

import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { moduleDigest, readManifestFields } from '../host/6-faces/toolchain/manifest-digest.js';
import { packageRoot } from '../host/1-base/paths.js';

const ROOT = packageRoot();

/** A file's bytes as staged in git's index, or undefined when git does not track it. */
function staged(file: string): Buffer | undefined {
  try {
    return execFileSync('git', ['show', `:${file}`], { cwd: ROOT, maxBuffer: 64 << 20, stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return undefined;
  }
}

const packs = readdirSync(path.join(ROOT, 'plugins'), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `plugins/${entry.name}`)
  .filter((dir) =>
    readdirSync(path.join(ROOT, dir)).some(
      (name) => name.endsWith('.tool.yaml') && !/^kind: container$/m.test(readFileSync(path.join(ROOT, dir, name), 'utf8')),
    ),
  );

describe('the shipped modules of the bundled toolpacks, as git holds them', () => {
  it('are found for every bundled toolpack', () => {
    expect(packs.length).toBeGreaterThanOrEqual(9);
  });

  it.each(packs)('%s: the tracked module hashes to the tracked manifest digest', (dir) => {
    const manifestName = readdirSync(path.join(ROOT, dir)).find((name) => name.endsWith('.tool.yaml'))!;
    const manifestText = staged(`${dir}/${manifestName}`);
    expect(manifestText, `${dir}/${manifestName} is not tracked`).toBeDefined();
    const fields = readManifestFields(manifestText!.toString('utf8'), manifestName);
    const module = path.posix.join(dir, fields.module);
    const bytes = staged(module);
    expect(bytes, `${module} is not tracked: run npm run build and git add it`).toBeDefined();
    expect({ module, digest: moduleDigest(bytes!) }).toEqual({ module, digest: fields.digest });
  });
});
