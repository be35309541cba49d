// The store's secret hash key (ABI-SECRET-008): made once, private to its owner, the same key for
// processes that start at once (real child processes on the built module), and a damaged or
// linked file refused with a clean error.
import { execFile } from 'node:child_process';
import { readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../test/helpers/toolpack.js';
import { packageRoot } from '../paths.js';
import { keyedHex, readSecretKey, secretKey, secretKeyPath } from './secret-key.js';

const run = promisify(execFile);
const homes: Array<{ cleanup: () => void }> = [];
const home = (): string => {
  const t = tempDir('helix-key-');
  homes.push(t);
  return t.dir;
};
afterEach(() => {
  for (const h of homes.splice(0)) h.cleanup();
});

describe('the secret hash key', () => {
  it('ABI-SECRET-008: is made once, 32 random bytes readable by its owner only, and read back the same', () => {
    const dir = home();
    expect(readSecretKey(dir)).toBeUndefined();
    const key = secretKey(dir);
    expect(key).toHaveLength(32);
    expect(statSync(secretKeyPath(dir)).mode & 0o777).toBe(0o600);
    expect(secretKey(dir).equals(key)).toBe(true);
    expect(keyedHex(key, 'x')).not.toBe(keyedHex(secretKey(home()), 'x'));
  });

  it('ABI-SECRET-008: is the same key for processes that make it at the same moment', async () => {
    const dir = home();
    const module = pathToFileURL(path.join(packageRoot(), 'dist', 'host', 'broker', 'secret-key.js')).href;
    const script = `const { secretKey } = await import(${JSON.stringify(module)}); process.stdout.write(secretKey(${JSON.stringify(dir)}).toString('hex'));`;
    const keys = await Promise.all(Array.from({ length: 6 }, () => run(process.execPath, ['--input-type=module', '-e', script]).then((r) => r.stdout)));
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe(readFileSync(secretKeyPath(dir), 'utf8').trim());
  });

  it('refuses a damaged key file or a symbolic link with P-PRECOND-STORE, never a stack trace', () => {
    const damaged = home();
    writeFileSync(secretKeyPath(damaged), 'not a key\n');
    expect(() => secretKey(damaged)).toThrow(expect.objectContaining({ code: 'P-PRECOND-STORE', message: expect.stringContaining('damaged') }));
    const linked = home();
    symlinkSync('/etc/hostname', secretKeyPath(linked));
    expect(() => readSecretKey(linked)).toThrow(expect.objectContaining({ code: 'P-PRECOND-STORE', message: expect.stringContaining('not a regular file') }));
  });
});
