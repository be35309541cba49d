// The store's secret hash key: 32 random bytes made once per store and kept beside the LMDB file
// (never in it), readable by its owner only. Hashes the journal keeps of bytes that may carry a
// secret are HMAC-SHA256 under it, so a weak secret cannot be guessed offline from an exported
// journal or record (ABI-SECRET-008); `helix verify` reads it to check them again.
import { createHmac, randomBytes } from 'node:crypto';
import { linkSync, lstatSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HelixError } from '../../../abi/index.js';

/** The key's file name in the Helix home. */
export const SECRET_KEY_FILE = 'secret-hash.key';

/** Where the key of the store in `home` lives. */
export function secretKeyPath(home: string): string {
  return path.join(home, SECRET_KEY_FILE);
}

/** HMAC-SHA256 hex of `data` under `key`. */
export function keyedHex(key: Uint8Array, data: Uint8Array | string): string {
  return createHmac('sha256', key).update(data).digest('hex');
}

/** Reads the key; undefined when there is none. A file that is not a key is P-PRECOND-STORE. */
export function readSecretKey(home: string): Buffer | undefined {
  const file = secretKeyPath(home);
  let text: string;
  try {
    // lstat, not stat: a symbolic link could point the host at any file it may read.
    if (!lstatSync(file).isFile())
      throw new HelixError('P-PRECOND-STORE', { message: `The secret hash key ${file} is not a regular file.`, details: { path: file } });
    text = readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    if (err instanceof HelixError) throw err;
    throw new HelixError('P-PRECOND-STORE', {
      message: `The secret hash key ${file} cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`,
      details: { path: file },
      cause: err,
    });
  }
  if (!/^[0-9a-f]{64}$/.test(text)) {
    throw new HelixError('P-PRECOND-STORE', {
      message: `The secret hash key ${file} is damaged: it is not 64 hex digits.`,
      details: { path: file },
      hint: 'Restore the file from a backup; runs journaled under another key can no longer be verified.',
    });
  }
  return Buffer.from(text, 'hex');
}

/**
 * The store's key, made if there is none yet. Made in a private temporary file and linked into
 * place, so two processes starting at once agree on one key: the second link fails and that
 * process reads the first one's key.
 */
export function secretKey(home: string): Buffer {
  const existing = readSecretKey(home);
  if (existing !== undefined) return existing;
  const file = secretKeyPath(home);
  const temp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    writeFileSync(temp, `${randomBytes(32).toString('hex')}\n`, { mode: 0o600, flag: 'wx' });
    try {
      linkSync(temp, file);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  } catch (err) {
    throw new HelixError('P-PRECOND-STORE', {
      message: `The secret hash key ${file} cannot be created: ${(err as NodeJS.ErrnoException).code ?? 'error'}.`,
      details: { path: file },
      cause: err,
    });
  } finally {
    try {
      unlinkSync(temp);
    } catch {
      // Never written, or already gone: nothing to clean.
    }
  }
  return readSecretKey(home)!;
}
