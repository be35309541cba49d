// An extism/v1 call whose input does not fit in the plugin's capped Extism memory (ABI-EXTISM-009:
// kernel memory is capped at maxMemoryPages) ends with a precise S-TOOL-TRAP before any plugin code
// runs, not with a crashed worker (S-TOOL-WORKER-LOST, retryable); the same host keeps serving.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../host/index.js';
import { extismWat } from './helpers/extism-wat.js';
import { DEFAULT_LIMITS, toolpacksDir, tempDir } from './helpers/toolpack.js';

// Outputs {"n":<input length % 10>}: it reads the input length, so it needs the input placed.
const LENGTH = extismWat(
  `(i32.store8 (i32.const 5) (i32.add (i32.const 48) (i32.wrap_i64 (i64.rem_u (call $input_length) (i64.const 10)))))
   (call $output_set (call $emit (i32.const 0) (i32.const 7)) (i64.const 7))
   (i32.const 0)`,
  { data: '{\\"n\\":0}' },
);

const home = tempDir('helix-home-');
let plugins: { dir: string; cleanup: () => void };
let host: Host;

beforeAll(async () => {
  plugins = await toolpacksDir([
    {
      id: 'x.length',
      module: LENGTH,
      manifest: { abi: 'extism/v1', entrypoint: 'run', limits: { ...DEFAULT_LIMITS, maxInputBytes: 4_000_000, maxMemoryPages: 16 } },
    },
  ]);
  host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
}, 60_000);
afterAll(async () => {
  await host?.close();
  plugins?.cleanup();
  home.cleanup();
});

describe('an extism/v1 input larger than the kernel memory cap', () => {
  it('ends with S-TOOL-TRAP naming the sizes, and the host keeps serving', async () => {
    const r = await host.call({ tool_id: 'x.length', input: { pad: 'y'.repeat(1_200_000) } });
    expect(r.status).toBe('terminal_error');
    expect(r.error).toMatchObject({ code: 'S-TOOL-TRAP', details: { max_memory_pages: 16, input_bytes: 1_200_010 } });
    expect(r.error!.message).toMatch(/does not fit in the plugin's Extism memory \(capped at 16 pages\)/);
    const ok = await host.call({ tool_id: 'x.length', input: { pad: 'y'.repeat(900_000) } });
    expect(ok.status).toBe('success');
    expect(ok.output).toEqual({ n: 900_010 % 10 });
  });
});
