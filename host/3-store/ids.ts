// Identifiers: artifact ids are ULIDs (48-bit time, 80 random bits, Crockford base32), so they
// sort by creation and never collide in practice.
import { randomBytes } from 'node:crypto';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/** A new artifact id: `art_` and a 26-character ULID. */
export function newArtifactId(nowMs: number = Date.now()): string {
  let time = '';
  let t = nowMs;
  for (let i = 0; i < 10; i++) {
    time = CROCKFORD[t % 32]! + time;
    t = Math.floor(t / 32);
  }
  const rnd = randomBytes(10);
  let bits = 0n;
  for (const b of rnd) bits = (bits << 8n) | BigInt(b);
  let tail = '';
  for (let i = 0; i < 16; i++) {
    tail = CROCKFORD[Number(bits & 31n)]! + tail;
    bits >>= 5n;
  }
  return `art_${time}${tail}`;
}
