// The store's secret hash key (ABI-SECRET-008): made once, private to its owner, the same key for
// processes that start at once (real child processes on the built module), and a damaged or
// linked file refused with a clean error, which a real broker answers secrets.get with.
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { PolicySchema } from '../../../abi/index.js';
import { packageRoot } from '../../1-base/paths.js';
import { openStore } from '../../3-store/open-store.js';
import { createBroker } from './broker.js';
import { RunOutputs } from './outputs.js';
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
    const module = pathToFileURL(path.join(packageRoot(), 'dist', 'host', '4-calls', 'broker', 'secret-key.js')).href;
    const script = `const { secretKey } = await import(${JSON.stringify(module)}); process.stdout.write(secretKey(${JSON.stringify(dir)}).toString('hex'));`;
    const keys = await Promise.all(
      Array.from({ length: 6 }, () => run(process.execPath, ['--input-type=module', '-e', script]).then((r) => r.stdout)),
    );
    expect(new Set(keys).size).toBe(1);
    expect(keys[0]).toBe(readFileSync(secretKeyPath(dir), 'utf8').trim());
  });

  it('refuses a damaged key file or a symbolic link with P-PRECOND-STORE, never a stack trace', () => {
    const damaged = home();
    writeFileSync(secretKeyPath(damaged), 'not a key\n');
    expect(() => secretKey(damaged)).toThrow(
      expect.objectContaining({ code: 'P-PRECOND-STORE', message: expect.stringContaining('damaged') }),
    );
    const linked = home();
    symlinkSync('/etc/hostname', secretKeyPath(linked));
    expect(() => readSecretKey(linked)).toThrow(
      expect.objectContaining({ code: 'P-PRECOND-STORE', message: expect.stringContaining('not a regular file') }),
    );
  });
});

describe('a broker whose store key cannot be made', () => {
  it('ABI-SECRET-008: answers secrets.get with P-PRECOND-STORE and hands out no secret; the guest goes on', async () => {
    const dir = home();
    mkdirSync(secretKeyPath(dir));
    const store = openStore(dir);
    process.env.HELIX_TEST_KEYLESS = 'a-secret-value-1234';
    try {
      const policy = PolicySchema.parse({
        version: 1,
        tools: { allow: ['*'] },
        grants: { '*': ['clock.*', 'secrets.get.pw'] },
        secrets: { pw: { env: 'HELIX_TEST_KEYLESS' } },
      });
      const runId = `run_${'b'.repeat(32)}`;
      const broker = createBroker({
        store,
        policy,
        toolId: 't.x',
        allow: ['clock.now_unix', 'secrets.get.pw'],
        network: [],
        runId,
        deadlineMs: Date.now() + 60_000,
        signal: new AbortController().signal,
        maxCapabilityCalls: 10,
        outputs: new RunOutputs(store, runId, [], 0),
      });
      const ask = async (name: string, args: object) => {
        const answer = await broker.handle(new TextEncoder().encode(JSON.stringify({ abi_version: 1, name, args })));
        return answer.kind === 'answer' ? JSON.parse(new TextDecoder().decode(answer.response)) : answer;
      };
      expect(await ask('secrets.get', { name: 'pw' })).toMatchObject({
        status: 'error',
        error: { code: 'P-PRECOND-STORE', message: expect.stringContaining('not a regular file') },
      });
      expect(await ask('clock.now_unix', {})).toMatchObject({ status: 'ok' });
      const { journal } = broker.finish();
      expect(journal.map((e) => e.keyed)).toEqual([undefined, undefined]);
    } finally {
      await store.close();
    }
  });
});
