// SecretSource reads a policy's `file` secrets as the loader reads toolpack files: a regular file
// within a bound, never a FIFO that would block the call, nor a device read without end.
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { HelixError, SECRET_FILE_MAX_BYTES } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { loadPolicy } from '../policy/load-policy.js';
import { SecretSource } from './ports.js';

const dir = tempDir('helix-secret-file-');
afterAll(() => dir.cleanup());

const sourceFor = (file: string): SecretSource => new SecretSource({ ...loadPolicy().policy, secrets: { token: { file } } });

function refusal(file: string): HelixError {
  try {
    sourceFor(file).get('token');
  } catch (err) {
    if (err instanceof HelixError) return err;
    throw err;
  }
  throw new Error(`reading ${file} did not fail`);
}

describe('SecretSource file secrets (ABI-FILE-005)', () => {
  it('SecretSource reads a regular file and drops one trailing newline', () => {
    const file = path.join(dir.dir, 'token.txt');
    writeFileSync(file, 's3cret-value\n');
    expect(sourceFor(file).get('token')).toBe('s3cret-value');
  });

  it('SecretSource refuses a FIFO at once instead of waiting for a writer', () => {
    const fifo = path.join(dir.dir, 'token.fifo');
    execFileSync('mkfifo', [fifo]);
    const err = refusal(fifo);
    expect(err.code).toBe('P-PRECOND-SECRET-MISSING');
    expect(err.message).toMatch(/FIFO|not a regular file/);
  });

  it('SecretSource refuses a device and a file over the bound, without quoting them', () => {
    expect(refusal('/dev/zero').code).toBe('P-PRECOND-SECRET-MISSING');
    const big = path.join(dir.dir, 'big.txt');
    writeFileSync(big, 'x'.repeat(SECRET_FILE_MAX_BYTES + 1));
    const err = refusal(big);
    expect(err.code).toBe('P-PRECOND-SECRET-MISSING');
    expect(err.message).not.toContain('xxxx');
  });
});
