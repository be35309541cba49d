// Which process owns something in the store (a running run, a pending write, the lifecycle lock,
// a compaction), and whether that process is still alive: a run left `running` by a process that
// died (kill -9, power loss) must be marked interrupted, while a run another live process is
// executing must be waited for, not executed twice.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** The owner stamp written into a running run. */
export interface Owner {
  readonly pid: number;
  readonly hostname: string;
  /** When the owning process started, ms since the epoch (tells a reused pid apart). */
  readonly started_at: number;
}

let bootMs: number | undefined;

/** Start time of a process in ms since the epoch from /proc, or undefined where /proc is absent. */
export function processStartMs(pid: number): number | undefined {
  try {
    bootMs ??= Number(/^btime (\d+)$/m.exec(readFileSync('/proc/stat', 'utf8'))?.[1]) * 1000;
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Field 22 (starttime, clock ticks since boot) follows the command name, which may hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[19]);
    return Number.isFinite(ticks) && Number.isFinite(bootMs) ? bootMs + ticks * 10 : undefined;
  } catch {
    return undefined;
  }
}

const self: Owner = {
  pid: process.pid,
  hostname: hostname(),
  started_at: processStartMs(process.pid) ?? Math.round(Date.now() - process.uptime() * 1000),
};

/** This process as an owner. */
export function currentOwner(): Owner {
  return self;
}

/** Whether `owner` is a live process other than this one (a different host counts as live). */
export function isOtherLiveOwner(owner: Owner): boolean {
  if (owner.hostname !== self.hostname) return true;
  if (owner.pid === self.pid && owner.started_at === self.started_at) return false;
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  const started = processStartMs(owner.pid);
  // A reused pid belongs to a process that started later than the recorded owner.
  return started === undefined || Math.abs(started - owner.started_at) < 2000;
}

/** The owner recorded as JSON in `file` (a marker or lock file), or undefined when it is missing, unreadable or not an owner. */
export function readOwnerFile(file: string): Owner | undefined {
  try {
    const owner = JSON.parse(readFileSync(file, 'utf8')) as Owner;
    return typeof owner.pid === 'number' && typeof owner.hostname === 'string' && typeof owner.started_at === 'number' ? owner : undefined;
  } catch {
    return undefined;
  }
}
