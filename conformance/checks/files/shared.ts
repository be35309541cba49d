// What the file checks share: where the kit writes a manifest, the environment marker a check
// plants, a host expected to refuse its files, the smallest policy, and a YAML alias bomb.
import path from 'node:path';
import { isHelixError } from '../../../abi/index.js';
import { createHost } from '../../../host/5-host/host.js';
import { CheckFailure, type CheckContext } from '../../check.js';
import { ENV_MARKER } from '../../kit/files-kit.js';

/** Where the kit writes the manifest of a pack with this id and directory. */
export const manifestOf = (plugins: string, dirName: string, id: string): string =>
  path.join(plugins, dirName, `${id.replace(/\./g, '_')}.tool.yaml`);

/** The environment marker in this process's environment (so /proc/self/environ holds it) while the check runs. */
export function markEnvironment(ctx: CheckContext): void {
  process.env.HELIX_CONFORMANCE_ENV_MARKER = ENV_MARKER;
  ctx.defer(() => void delete process.env.HELIX_CONFORMANCE_ENV_MARKER);
}

/** Starts a host over `plugins` (with `policyFile` or the default policy) expecting a refusal; returns it. */
export async function refusedHost(
  ctx: CheckContext,
  plugins: string,
  policyFile?: string,
): Promise<{ code: string; message: string; details: Record<string, unknown> }> {
  const t0 = performance.now();
  try {
    const h = await createHost({
      toolpacksDir: plugins,
      home: path.join(ctx.env.dir, `home-${path.basename(plugins)}`),
      warn: () => undefined,
      ...(policyFile === undefined ? {} : { policyFile }),
    });
    await h.close();
  } catch (e) {
    if (!isHelixError(e))
      throw new CheckFailure(`loading ended in an internal error, not a refusal: ${e instanceof Error ? e.stack : String(e)}`);
    ctx.note(`refused in ${Math.round(performance.now() - t0)} ms: ${e.code}: ${e.message}`);
    return { code: e.code, message: e.message, details: e.details };
  }
  throw new CheckFailure(`the host over ${plugins} started; it had to refuse`);
}

/** The smallest policy a host accepts: every tool allowed. */
export const DEFAULT_POLICY_TEXT = 'version: 1\ntools:\n  allow: ["*"]\n';

/** Nine levels of nine aliases each of the one before: 9^9 values when expanded. */
export const BOMB = [
  'x-bomb:',
  '  a: &a [x, x, x, x, x, x, x, x, x]',
  ...Array.from({ length: 8 }, (_, i) => `  ${'bcdefghi'[i]}: &${'bcdefghi'[i]} [${Array(9).fill(`*${'abcdefghi'[i]}`).join(', ')}]`),
].join('\n');
