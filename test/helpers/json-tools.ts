// The toolpacks and JSON texts the JSON-bounds tests (ABI-JSON-*) share: an echo tool, guests that
// output or request bytes the test chooses (helix/v1 and extism/v1), and deep or odd JSON.
import { afterAll, beforeAll, expect } from 'vitest';
import { createHost, type Host } from '../../host/index.js';
import { echoModule } from './guest-wat.js';
import { bytesExtismModule, bytesOutputModule, bytesRequestModule } from './bytes-guest-wat.js';
import { toolpacksDir, tempDir, type ToolpackSpec } from './toolpack.js';

const limits = { maxInputBytes: 2_000_000, maxOutputBytes: 1_000_000, fuel: 1_000_000_000, maxMemoryPages: 128, maxCapabilityCalls: 10 };
const OPEN = { type: 'object' };

/**
 * j.echo answers its input; j.out outputs chosen bytes; j.req sends chosen bytes as a capability
 * request with an empty allowlist, j.kv with kv.put and kv.get allowed; j.x_out, j.x_err and
 * j.x_req do the same as extism/v1 plugins (output, error_set, capability request).
 */
export function jsonToolpacks(): ToolpackSpec[] {
  const helix = (id: string, module: string, allow: string[] = []): ToolpackSpec => ({
    id,
    module,
    manifest: { limits, capabilities: { abiVersion: 1, allow } },
    outputSchema: OPEN,
  });
  const extism = (id: string, mode: 'output' | 'error' | 'request'): ToolpackSpec => ({
    id,
    module: bytesExtismModule(mode),
    manifest: { abi: 'extism/v1', entrypoint: 'run', limits, capabilities: { abiVersion: 1, allow: [] } },
    outputSchema: OPEN,
  });
  return [
    helix('j.echo', echoModule()),
    helix('j.out', bytesOutputModule()),
    helix('j.req', bytesRequestModule()),
    helix('j.kv', bytesRequestModule(), ['kv.put', 'kv.get']),
    extism('j.x_out', 'output'),
    extism('j.x_err', 'error'),
    extism('j.x_req', 'request'),
  ];
}

/** A real host over jsonToolpacks() on a fresh store. */
export interface JsonHost {
  readonly host: Host;
  /** Checks the host still serves: a well-behaved call (j.echo) succeeds. */
  expectServing(): Promise<void>;
  /** Closes the host and removes its store and toolpacks. */
  close(): Promise<void>;
}

/** Starts a JsonHost. */
export async function startJsonHost(): Promise<JsonHost> {
  const home = tempDir('helix-json-home-');
  const plugins = await toolpacksDir(jsonToolpacks());
  const host = await createHost({ toolpacksDir: plugins.dir, home: home.dir });
  let served = 0;
  return {
    host,
    async expectServing() {
      served += 1;
      expect(await host.call({ tool_id: 'j.echo', input: { served } })).toMatchObject({ status: 'success', output: { served } });
    },
    async close() {
      await host.close();
      plugins.cleanup();
      home.cleanup();
    },
  };
}

/** A JsonHost started before the file's tests and closed after them. */
export function useJsonHost(): JsonHost {
  let started: JsonHost | undefined;
  beforeAll(async () => {
    started = await startJsonHost();
  }, 120_000);
  afterAll(async () => {
    await started?.close();
  });
  return {
    get host() {
      return started!.host;
    },
    expectServing: () => started!.expectServing(),
    close: () => started!.close(),
  };
}

/** `n` nested objects `{"a":...}` around `leaf`: depth n. */
export function nestedObjects(n: number, leaf = '0'): string {
  return `${'{"a":'.repeat(n)}${leaf}${'}'.repeat(n)}`;
}

/** `n` nested arrays: depth n. */
export function nestedArrays(n: number): string {
  return `${'['.repeat(n)}${']'.repeat(n)}`;
}

/** A helix/v1 ok envelope around an output value given as JSON text. */
export function okEnvelope(output: string): string {
  return `{"status":"ok","output":${output}}`;
}

/** A capability request envelope with args given as JSON text. */
export function capabilityRequest(name: string, args: string): string {
  return `{"abi_version":1,"name":"${name}","args":${args}}`;
}

/** The pointer /a/a/.../a of `n` segments under `prefix`. */
export function aPointer(prefix: string, n: number): string {
  return `${prefix}${'/a'.repeat(n)}`;
}
