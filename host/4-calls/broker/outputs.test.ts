// A run's outputs with a secret guard, on a real LMDB store: a secret hidden from the byte check
// by gzip still shows in the stored preview (the decompressed text), so the preview is checked
// too (ABI-SECRET-004).
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../../../test/helpers/toolpack.js';
import type { SecretWriteRules } from '../policy/rules.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { RunOutputs } from './outputs.js';
import { SecretGuard } from './secret-guard.js';

const SECRET = 'correct horse battery staple';
const RUN = `run_${'a'.repeat(32)}`;
const home = tempDir('helix-outputs-');
let store: Store;

beforeAll(() => {
  store = openStore(home.dir);
});
afterAll(async () => {
  await store.close();
  home.cleanup();
});

function outputs(artifacts: SecretWriteRules['artifacts']): RunOutputs {
  const guard = new SecretGuard({ kv: 'refuse', artifacts, log: 'redact', output: 'redact' });
  guard.add('horse', SECRET);
  const o = new RunOutputs(store, RUN, [{ role: 'report', type: 'text' }], 1 << 20);
  o.guardWith(guard);
  return o;
}

const gzipped = (): Uint8Array => gzipSync(`line one\nthe password is ${SECRET}\n`);

describe('RunOutputs with a secret guard', () => {
  it('ABI-SECRET-004: refuses to seal an output whose preview shows a secret the gzip hid from the byte check', async () => {
    const o = outputs('refuse');
    const bytes = gzipped();
    expect(Buffer.from(bytes).includes(Buffer.from(SECRET))).toBe(false);
    await expect(o.write('report', bytes, true, { type: 'text' })).rejects.toMatchObject({
      code: 'A-AUTH-SECRET-WRITE',
      details: { secret: 'horse', path: '/preview/text', role: 'report' },
    });
    await expect(o.write('report', new Uint8Array([65]), true, {})).rejects.toMatchObject({
      code: 'A-AUTH-SECRET-WRITE',
      details: { refused_before: true },
    });
    expect(o.check(o.close())).toEqual(['role report was refused: it carried the value of secret horse']);
  });

  it('ABI-SECRET-004: keeps the gzip bytes but redacts the preview under redact', async () => {
    const o = outputs('redact');
    const sealed = await o.write('report', gzipped(), true, { type: 'text' });
    expect(sealed.artifact).toBeDefined();
    const [out] = o.close();
    expect(out!.prepared.preview.text).toBe('line one\nthe password is [secret:horse]\n');
  });

  it('ABI-SECRET-004: holds back the tail of a piece, so a form across pieces is redacted whole', async () => {
    const o = outputs('redact');
    await o.write('report', Buffer.from(`a ${SECRET.slice(0, 10)}`), false, {});
    await o.write('report', Buffer.from(SECRET.slice(10)), false, {});
    await o.write('report', Buffer.from(' b'), true, {});
    const [out] = o.close();
    expect(out!.prepared.preview.text).toBe('a [secret:horse] b');
    expect(out!.prepared.blob.size).toBe('a [secret:horse] b'.length);
  });
});
