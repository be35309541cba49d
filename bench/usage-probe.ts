// Preloaded into a timed `helix` process (node --import) by bench/processes.ts: at exit it writes
// the process's peak resident set (bytes) and CPU time (ms) as JSON to HELIX_BENCH_USAGE_FILE.
import { writeFileSync } from 'node:fs';

const file = process.env.HELIX_BENCH_USAGE_FILE;
if (file !== undefined && file !== '') {
  process.on('exit', () => {
    // maxRSS is in kilobytes, CPU times in microseconds; both cover every thread of the process.
    const u = process.resourceUsage();
    writeFileSync(file, JSON.stringify({ maxRssBytes: u.maxRSS * 1024, cpuMs: (u.userCPUTime + u.systemCPUTime) / 1000 }));
  });
}
