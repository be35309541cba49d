// A FUSE filesystem for the fan-out checks: one empty directory served on /dev/fuse by a small
// daemon in a child process (just enough of the protocol for stat, statfs and readdir), so a
// check can hand `helix job run` a home whose statfs type is a network or cluster filesystem's
// (FUSE) on a machine that has no NFS or SMB server. Needs root and /dev/fuse.
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { CheckFailure, type CheckContext } from '../check.js';

const DAEMON = String.raw`// A FUSE filesystem of one empty directory, served on /dev/fuse: just enough for stat, statfs and readdir.
const fs = require('node:fs');
const { spawnSync } = require('node:child_process');
const mountpoint = process.argv[2];
const fd = fs.openSync('/dev/fuse', 'r+');
const m = spawnSync('mount', ['-t', 'fuse.helixconformance', '-o', 'fd=3,rootmode=40000,user_id=0,group_id=0,allow_other', 'helix-conformance', mountpoint], { stdio: ['ignore', 'pipe', 'pipe', fd] });
if (m.status !== 0) { process.stderr.write('mount failed: ' + m.stderr); process.exit(3); }
process.stdout.write('mounted\n');
const buf = Buffer.alloc(1 << 20);
const reply = (unique, error, body = Buffer.alloc(0)) => {
  const h = Buffer.alloc(16);
  h.writeUInt32LE(16 + body.length, 0); h.writeInt32LE(error, 4); h.writeBigUInt64LE(unique, 8);
  try { fs.writeSync(fd, Buffer.concat([h, body])); } catch {}
};
const attr = () => {
  const b = Buffer.alloc(104);
  b.writeBigUInt64LE(1n, 0); // attr_valid
  b.writeBigUInt64LE(1n, 16); // ino
  b.writeUInt32LE(0o40755, 16 + 60); // mode
  b.writeUInt32LE(2, 16 + 64); // nlink
  b.writeUInt32LE(4096, 16 + 80); // blksize
  return b;
};
for (;;) {
  let n;
  try { n = fs.readSync(fd, buf, 0, buf.length, null); } catch (e) { if (e.code === 'EINTR' || e.code === 'EAGAIN') continue; process.exit(0); }
  if (n < 40) continue;
  const opcode = buf.readUInt32LE(4);
  const unique = buf.readBigUInt64LE(8);
  switch (opcode) {
    case 26: { // INIT
      const out = Buffer.alloc(64);
      out.writeUInt32LE(7, 0); out.writeUInt32LE(26, 4); out.writeUInt32LE(buf.readUInt32LE(48), 8);
      out.writeUInt32LE(0, 12); out.writeUInt16LE(16, 16); out.writeUInt16LE(12, 18); out.writeUInt32LE(4096, 20);
      reply(unique, 0, out); break;
    }
    case 3: reply(unique, 0, attr()); break; // GETATTR
    case 17: { const out = Buffer.alloc(80); out.writeBigUInt64LE(1000n, 0); out.writeBigUInt64LE(1000n, 8); out.writeBigUInt64LE(1000n, 16); out.writeBigUInt64LE(100n, 24); out.writeBigUInt64LE(100n, 32); out.writeUInt32LE(4096, 40); out.writeUInt32LE(255, 44); out.writeUInt32LE(4096, 48); reply(unique, 0, out); break; }
    case 34: reply(unique, 0); break; // ACCESS
    case 27: reply(unique, 0, Buffer.alloc(16)); break; // OPENDIR
    case 28: reply(unique, 0); break; // READDIR: empty
    case 29: reply(unique, 0); break; // RELEASEDIR
    case 1: reply(unique, -2); break; // LOOKUP: nothing in it
    case 2: case 42: case 36: break; // FORGET, BATCH_FORGET, INTERRUPT: no reply
    case 38: reply(unique, 0); process.exit(0); // DESTROY
    default: reply(unique, -38); // ENOSYS
  }
}
`;

/** Mounts an empty FUSE directory under the check's directory; unmounted when the check ends. */
export async function mountFuseDir(ctx: CheckContext): Promise<string> {
  const dir = path.join(ctx.env.dir, 'fuse');
  const mountpoint = path.join(dir, 'mnt');
  mkdirSync(mountpoint, { recursive: true });
  const script = path.join(dir, 'fuse-daemon.cjs');
  writeFileSync(script, DAEMON);
  const child = spawn(process.execPath, [script, mountpoint], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  ctx.defer(() => {
    try {
      execFileSync('umount', ['-l', mountpoint], { stdio: 'ignore' });
    } catch {
      // not mounted
    }
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new CheckFailure('the FUSE directory was not mounted within 10 s')), 10_000);
    child.stdout.on('data', (c: Buffer) => {
      if (c.toString().includes('mounted')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new CheckFailure(`a FUSE directory cannot be mounted here (needs root and /dev/fuse; exit ${code}): ${stderr.trim()}`));
    });
  });
  return mountpoint;
}
