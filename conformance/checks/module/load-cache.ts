// Conformance checks of what a host remembers of a module between starts: a stamp of its sources
// (a stale build is named), and the load cache in the store, which a swapped module or poisoned
// cached bytes must not get past (ABI-LOAD-007, ABI-LOAD-008).
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { packageRoot } from '../../../host/1-base/paths.js';
import { instrumentModule } from '../../../host/2-sandbox/wasm/index.js';
import { createHost } from '../../../host/5-host/host.js';
import { moduleCacheKey } from '../../../host/5-host/inspection.js';
import { collectSourceInputs, stampPath, stampText } from '../../../host/6-faces/toolchain/source-stamp.js';
import { expect, type Check } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';
import { digestOf, writeToolpack } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { checkDefaultPolicy } from '../../runner.js';

/** Runs the CLI (bounded); resolves with its exit code and output. */
function cli(args: readonly string[], timeoutMs = 30_000): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(packageRoot(), 'dist', 'cli', 'main.js'), ...args],
      { timeout: timeoutMs, maxBuffer: 16 * 2 ** 20 },
      (err, stdout, stderr) => {
        const code =
          err === null
            ? 0
            : typeof (err as NodeJS.ErrnoException & { code?: unknown }).code === 'number'
              ? (err as unknown as { code: number }).code
              : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** The checks of this file, in the report's order. */
export const loadCacheChecks: readonly Check[] = [
  {
    id: 'module.stale-source-stamp',
    title: 'A module whose sources changed after helix build gets one warning line from helix call',
    category: 'module',
    abi: ['ABI-LOAD-007'],
    engines: ['helix'],
    expected:
      'helix call (a child process) succeeds and prints on stderr one warning naming src/tool.c as changed and the helix build command; before the edit, nothing',
    packs: () => [{ id: 'module.stamped', module: echoModule(), extraFiles: { 'src/tool.c': 'int main(void) { return 0; }\n' } }],
    async run(ctx) {
      const plugins = await ctx.toolpacksDir();
      const packDir = path.join(plugins, 'module.stamped');
      const modulePath = path.join(packDir, 'tool.wasm');
      const digest = digestOf(readFileSync(modulePath));
      writeFileSync(stampPath(modulePath), stampText(packDir, modulePath, digest, collectSourceInputs(packDir), 'conformance'));
      const policy = path.join(ctx.env.dir, 'cli-policy.json');
      writeFileSync(policy, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const args = [
        'call',
        'module.stamped',
        '--toolpacks',
        plugins,
        '--policy',
        policy,
        '--home',
        path.join(ctx.env.dir, 'cli-home'),
        '--input',
        '{"x":1}',
      ];
      const fresh = await cli(args);
      expect(fresh.code === 0, `helix call on the fresh module exited ${fresh.code}: ${fresh.stderr}`);
      expect(!/helix build/.test(fresh.stderr), `a fresh module got a warning: ${fresh.stderr}`);
      writeFileSync(path.join(packDir, 'src', 'tool.c'), 'int main(void) { return 1; } /* edited after the build */\n');
      const stale = await cli([...args.slice(0, -1), '{"x":2}']);
      ctx.observe('stderr', stale.stderr.trim());
      expect(stale.code === 0, `helix call on the stale module exited ${stale.code}: ${stale.stderr}`);
      const warn = stale.stderr.split('\n').filter((l) => /helix build/.test(l));
      expect(
        warn.length === 1 && warn[0]!.includes('src/tool.c'),
        `expected one warning line naming src/tool.c and helix build, stderr: ${stale.stderr}`,
      );
    },
  },
  {
    id: 'module.swapped-after-first-load',
    title: 'A module replaced (with its digest) after a host cached its checks is checked in full again and refused',
    category: 'module',
    abi: ['ABI-LOAD-008', 'ABI-LOAD-001'],
    engines: ['helix', 'extism'],
    expected:
      'a first host over the good module starts and serves (the load cache now knows it); the module is replaced by one importing env.exfiltrate and the manifest digest updated: a host over the same home refuses to start with P-PRECOND-MANIFEST-INVALID naming the import',
    packs: (engine) => [{ id: 'module.swap', module: engine.guests.echo(), manifest: { ...engine.manifest } }],
    async run(ctx) {
      const plugins = await ctx.toolpacksDir();
      const policyFile = path.join(ctx.env.dir, 'swap-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const home = path.join(ctx.env.dir, 'home-swap');
      const startAndCall = async (): Promise<string> => {
        const h = await createHost({ toolpacksDir: plugins, policyFile, home });
        try {
          const r = await h.call({ tool_id: 'module.swap', input: { at: performance.now() } });
          return r.status;
        } finally {
          await h.close();
        }
      };
      // Two starts over the good module: the second is served from the load cache of the home.
      const t0 = performance.now();
      const first = await startAndCall();
      const t1 = performance.now();
      const second = await startAndCall();
      const t2 = performance.now();
      ctx.observe('first_start_and_call_ms', Math.round(t1 - t0));
      ctx.observe('cached_start_and_call_ms', Math.round(t2 - t1));
      expect(first === 'success' && second === 'success', `the good module answered ${first} then ${second}`);
      const { module: evil, rule } = ctx.engine.guests.outsideImport;
      ctx.show({ label: 'the module swapped in', lang: 'wat', text: evil });
      const { bytes } = await writeToolpack(path.join(ctx.env.dir, 'evil'), { id: 'module.swap', module: evil });
      const dir = path.join(plugins, 'module.swap');
      writeFileSync(path.join(dir, 'tool.wasm'), bytes);
      const manifestFile = path.join(dir, 'module_swap.tool.yaml');
      writeFileSync(manifestFile, readFileSync(manifestFile, 'utf8').replace(/digest: .*/, `digest: ${digestOf(bytes)}`));
      let refused: string | undefined;
      try {
        await startAndCall();
      } catch (e) {
        refused = `${(e as { code?: string }).code}: ${JSON.stringify((e as { details?: unknown }).details)}`;
      }
      ctx.observe('refusal', refused);
      expect(
        refused?.startsWith('P-PRECOND-MANIFEST-INVALID') && refused.includes('env.exfiltrate') && refused.includes(rule),
        `the host over the cached home did not refuse the swapped module: ${refused ?? 'it started and served'}`,
      );
    },
  },
  {
    id: 'module.poisoned-load-cache',
    title: 'Instrumented bytes swapped in the load cache of the store are never run: they are hashed, rebuilt and audited',
    category: 'module',
    abi: ['ABI-LOAD-008'],
    engines: ['helix', 'extism'],
    expected:
      "a first host caches the echo module's instrumented bytes in its home; the cached bytes are replaced by a hostile module's (the entry's seal and recorded digest left as they were); a second host over the same home answers the echo's output, not the hostile {\"pwned\":true}, and the audit trail records store.load_cache_rebuilt for the entry",
    packs: (engine) => [{ id: 'module.cached', module: engine.guests.echo(), manifest: { ...engine.manifest } }],
    async run(ctx) {
      const plugins = await ctx.toolpacksDir();
      const policyFile = path.join(ctx.env.dir, 'cache-policy.json');
      writeFileSync(policyFile, JSON.stringify(checkDefaultPolicy(ctx.env)));
      const home = path.join(ctx.env.dir, 'home-cache');
      const first = await createHost({ toolpacksDir: plugins, policyFile, home });
      let key: string;
      try {
        const r = await first.call({ tool_id: 'module.cached', input: { round: 1 } });
        expect(r.status === 'success', `the first call answered ${r.status} ${r.error?.code ?? ''}`);
        const tool = first.tools().find((t) => t.id === 'module.cached')!;
        key = moduleCacheKey(tool.moduleDigest!, tool.limits.maxMemoryPages);
        const entry = first.diagnostics.record('loadCache', key) as { bytes?: Uint8Array; bytesDigest?: string } | undefined;
        expect(entry?.bytes instanceof Uint8Array, `the load cache holds no instrumented bytes under ${key}`);
        const hostile = ctx.engine.guests.answering('{"pwned":true}');
        ctx.show({ label: 'the module whose instrumented bytes are put in the cache', lang: 'wat', text: hostile });
        const poison = instrumentModule(await wat2wasm(hostile), { maxMemoryPages: tool.limits.maxMemoryPages }).bytes;
        await first.diagnostics.plant('loadCache', key, { ...entry, bytes: poison });
        ctx.observe('cache_key', key);
        ctx.observe('poison_bytes', poison.length);
      } finally {
        await first.close();
      }
      const second = await createHost({ toolpacksDir: plugins, policyFile, home });
      try {
        const r = await second.call({ tool_id: 'module.cached', input: { round: 2 } });
        ctx.observe('second_output', r.output);
        expect(
          r.status === 'success' && JSON.stringify(r.output) === JSON.stringify({ round: 2 }),
          `the second host answered ${JSON.stringify(r.output ?? r.error)}`,
        );
        const rebuilt = second.audit.list({ kind: 'store.load_cache_rebuilt' });
        ctx.observe('audit', rebuilt);
        expect(
          rebuilt.some((a) => (a as { key?: string }).key === key),
          `no store.load_cache_rebuilt audit record for ${key}`,
        );
      } finally {
        await second.close();
      }
    },
  },
];
