// What the isolation checks share: the plant guest as a toolpack of the engine, what its flags mean,
// the script guest with an allowlist, and the results of a script call's capability calls.
import { expect, expectSuccess, type CheckContext, type EngineAdapter, type PackSpec } from '../../check.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
export const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

/** What a plant call found of earlier calls, in words. */
export function describeFlags(flags: number): string {
  const seen = [
    flags & 1 ? 'the secret in memory' : '',
    flags & 2 ? 'the global' : '',
    flags & 4 ? 'grown memory' : '',
    flags & 8 ? 'the Extism variable' : '',
  ].filter((s) => s !== '');
  return seen.length === 0 ? 'nothing' : seen.join(', ');
}

/** The plant of `engine` (growing memory with `grow`) as a toolpack, or undefined where the engine's kit has no such plant. */
export function plantPack(engine: EngineAdapter, id: string, grow = false): PackSpec | undefined {
  const module = engine.guests.plant(grow);
  return module === undefined ? undefined : engine.pack(id, module, { limits: { ...DEFAULT_LIMITS } });
}

/** The script guest (conformance/assembly/script.ts) with `allow`. */
export const scriptPack = (id: string, allow: readonly string[], manifest: Record<string, unknown> = {}): PackSpec => ({
  id,
  guest: 'script.ts',
  module: new Uint8Array(),
  manifest: { capabilities: { abiVersion: 1, allow }, ...manifest },
});

/** A capability call the script guest makes. */
export const cap = (name: string, args: Record<string, unknown>): { name: string; args: Record<string, unknown> } => ({ name, args });

/** The results of a script call's capability calls, in order. */
export function answers(r: Awaited<ReturnType<CheckContext['call']>>): Array<Record<string, unknown>> {
  const out = expectSuccess(r) as {
    answers?: Array<{ status: string; capability_result?: { result: Record<string, unknown> }; error?: { code: string } }>;
  };
  return (out.answers ?? []).map((a) => {
    expect(a.status === 'ok', `a capability call was refused: ${JSON.stringify(a)}`);
    return a.capability_result!.result;
  });
}
