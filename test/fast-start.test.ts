// A fast start (ABI-LOAD-008) end to end: `helix call` of one tool beside a large module, from a
// cold store and from its load cache; and a cached module the engine refuses, refused at its
// first call before any of it runs.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { createHost } from '../host/5-host/host.js';
import { moduleCacheKey } from '../host/4-calls/loader/loader-cache.js';
import { writeLoadCache } from '../host/3-store/load-cache.js';
import { openStore } from '../host/3-store/open-store.js';
import { runCli } from './helpers/cli-process.js';
import { echoModule } from './helpers/guest-wat.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';
import { wat2wasm } from './helpers/wat.js';

const cleanups: Array<() => void> = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/** A valid guest of about `bytes` bytes: the echo module, many small functions, and a custom section. */
async function largeModule(bytes: number): Promise<Uint8Array> {
  const funcs = Array.from(
    { length: 2000 },
    (_, i) => `(func $f${i} (param i32) (result i32) (i32.add (local.get 0) (i32.const ${i})))`,
  ).join('\n');
  const base = await wat2wasm(echoModule(funcs), 'large.wat');
  const payload = Math.max(0, bytes - base.length);
  const name = Buffer.from('padding');
  const body = Buffer.concat([Buffer.from([name.length]), name, Buffer.alloc(payload, 7)]);
  return Buffer.concat([base, Buffer.from([0]), leb(body.length), body]);
}

function leb(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n !== 0) b |= 0x80;
    out.push(b);
  } while (n !== 0);
  return Buffer.from(out);
}

describe('helix call with a load cache', () => {
  it('calls one tool while another toolpack holds a 1 MB module, cold and then from the cache, and the large one too', async () => {
    const plugins = await toolpacksDir([
      // A worker starts inside the first call's deadline: generous, for a loaded machine.
      { id: 'fast.echo', module: echoModule(), manifest: { timeoutMs: 60_000 } },
      { id: 'fast.large', module: await largeModule(1024 * 1024), manifest: { timeoutMs: 60_000 } },
    ]);
    const home = tempDir();
    cleanups.push(plugins.cleanup, home.cleanup);
    const call = (tool: string, input: string) =>
      runCli(['call', tool, '--toolpacks', plugins.dir, '--home', home.dir, '--input', input, '--compact']);
    for (const [input, replayed] of [
      ['{"n":1}', false],
      ['{"n":2}', false],
      ['{"n":2}', true],
    ] as const) {
      const r = await call('fast.echo', input);
      expect(r.stderr).toBe('');
      const response = JSON.parse(r.stdout) as { status: string; output: unknown; replayed: boolean };
      expect({ code: r.code, status: response.status, output: response.output, replayed: response.replayed }).toEqual({
        code: 0,
        status: 'success',
        output: JSON.parse(input),
        replayed,
      });
    }
    const large = await call('fast.large', '{"big":true}');
    expect(JSON.parse(large.stdout)).toMatchObject({ status: 'success', output: { big: true } });
    // Four processes, each loading every toolpack: generous, for a loaded machine.
  }, 300_000);

  it('refuses at its first call, before any of it runs, a cached module the engine will not compile (P-PRECOND-MODULE-REFUSED)', async () => {
    const plugins = await toolpacksDir([{ id: 'fast.refused', module: echoModule() }]);
    const home = tempDir();
    cleanups.push(plugins.cleanup, home.cleanup);
    const first = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
    const tool = first.tools().find((t) => t.id === 'fast.refused')!;
    const cap = tool.limits.maxMemoryPages;
    await first.close();
    // An entry sealed as the cache seals it, holding bytes no engine compiles.
    const store = openStore(home.dir);
    const facts = {
      info: { imports: [], exports: [], memories: [], tables: [], startFunction: null, functionCount: 0, codeBytes: 0, features: [] },
      recyclable: true,
      globalExports: [],
      hasStart: false,
    };
    const manifestFile = path.join(plugins.dir, 'fast.refused', 'fast_refused.tool.yaml');
    const digest = /digest: (sha256:[0-9a-f]{64})/.exec(readFileSync(manifestFile, 'utf8'))![1]!;
    await writeLoadCache(
      store,
      [
        {
          key: moduleCacheKey(digest, cap),
          facts: {
            ...facts,
            info: {
              ...facts.info,
              exports: [
                { name: 'memory', kind: 'memory', index: 0 },
                { name: 'alloc', kind: 'func', index: 0, type: { params: ['i32'], results: ['i32'] } },
                { name: 'dealloc', kind: 'func', index: 1, type: { params: ['i32', 'i32'], results: [] } },
                { name: 'execute', kind: 'func', index: 2, type: { params: ['i32', 'i32'], results: ['i64'] } },
              ],
            },
          },
          bytes: Uint8Array.from([0, 97, 115, 109, 1, 0, 0, 0, 99]),
        },
      ],
      Date.now(),
    );
    await store.close();
    const host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
    try {
      const r = await host.call({ call_id: 'c1', tool_id: 'fast.refused', tool_version: '*', input: {}, constraints: {}, dry_run: false });
      expect(r).toMatchObject({
        status: 'terminal_error',
        error: {
          code: 'P-PRECOND-MODULE-REFUSED',
          details: { tool_id: 'fast.refused', reason: expect.stringMatching(/^ABI-MODULE-001: the engine refuses the module: /) },
        },
        metrics: { fuel_used: 0 },
      });
    } finally {
      await host.close();
    }
  });
});
