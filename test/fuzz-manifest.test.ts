// Property tests of the toolpack loader on random manifests (conformance/kit/fuzz-manifests.ts):
// valid manifests load; manifests broken on purpose, randomly mutated manifests and edited YAML
// texts never make the loader throw anything but P-PRECOND-MANIFEST-INVALID with its violations,
// each naming the manifest file, and it never accepts a manifest the schema refuses
// (ABI-LOAD-001, ABI-LOAD-002). `npm run fuzz` runs them longer.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContainerManifestSchema, isHelixError, ToolManifestSchema } from '../abi/index.js';
import { loadEveryToolpackOrThrow } from '../host/4-calls/loader/load-toolpacks.js';
import { loadPolicy } from '../host/4-calls/policy/load-policy.js';
import { breakManifest, manifestText, mutateManifest, mutateText, validManifest } from '../conformance/kit/fuzz-manifests.js';
import { rand } from '../conformance/kit/fuzz-random.js';
import { echoModule } from './helpers/guest-wat.js';
import { fuzzRuns } from './helpers/json-arbitraries.js';
import { digestOf, tempDir } from './helpers/toolpack.js';
import { wat2wasm } from './helpers/wat.js';

/** Runs per property; a manifest that loads costs its two schemas' Ajv compiles (some 30 to 70 ms), so valid ones run fewer. */
const RUNS = fuzzRuns(150);
const VALID_RUNS = fuzzRuns(20);
const policy = loadPolicy(undefined).policy;
const root = tempDir('helix-fuzz-manifest-');
let module: Uint8Array;
let digest: string;
let cases = 0;

beforeAll(async () => {
  module = await wat2wasm(echoModule());
  digest = digestOf(module);
});
afterAll(() => root.cleanup());

type Loaded = { ok: true; tools: number; containers: number } | { ok: false; violations: string[] };

/** Loads a toolpacks directory holding one toolpack whose manifest is `text`: what the loader made of it. */
async function load(text: string): Promise<Loaded> {
  cases += 1;
  const plugins = path.join(root.dir, `case-${cases}`);
  const pack = path.join(plugins, 'pack');
  mkdirSync(pack, { recursive: true });
  writeFileSync(path.join(pack, 'tool.wasm'), module);
  writeFileSync(path.join(pack, 'fuzz.tool.yaml'), text);
  try {
    const { tools, containers } = await loadEveryToolpackOrThrow(plugins, policy);
    return { ok: true, tools: tools.length, containers: containers.length };
  } catch (e) {
    // Anything but the loader's own refusal fails the property, with the case that caused it.
    if (!isHelixError(e) || e.code !== 'P-PRECOND-MANIFEST-INVALID') throw e;
    const violations = e.details.violations as unknown;
    expect(Array.isArray(violations) && violations.length > 0).toBe(true);
    for (const v of violations as unknown[]) {
      expect(typeof v).toBe('string');
      expect(v as string).toContain('fuzz.tool.yaml');
    }
    return { ok: false, violations: violations as string[] };
  }
}

/** What the schema makes of the text, as the loader reads it (YAML, then the manifest schema, or the container schema for kind: container). */
function schemaAccepts(text: string): boolean {
  let doc: unknown;
  try {
    doc = parse(text, { maxAliasCount: 100 });
  } catch {
    return false;
  }
  if (typeof doc === 'object' && doc !== null && (doc as { kind?: unknown }).kind === 'container')
    return ContainerManifestSchema.safeParse(doc).success;
  return ToolManifestSchema.safeParse(doc).success;
}

const seeds = fc.integer({ min: 0, max: 0x7fffffff });

describe('the loader on random manifests (ABI-LOAD-001, ABI-LOAD-002)', () => {
  it('loads every valid manifest', async () => {
    await fc.assert(
      fc.asyncProperty(seeds, async (seed) => {
        const m = validManifest(rand(seed), digest);
        expect(ToolManifestSchema.safeParse(m).success).toBe(true);
        expect(await load(manifestText(m))).toEqual({ ok: true, tools: 1, containers: 0 });
      }),
      { numRuns: VALID_RUNS },
    );
  }, 600_000);

  it('refuses every manifest broken on purpose, naming the file and the field', async () => {
    await fc.assert(
      fc.asyncProperty(seeds, async (seed) => {
        const r = rand(seed);
        const broken = breakManifest(r, validManifest(r, digest));
        expect(ToolManifestSchema.safeParse(broken.manifest).success, broken.what).toBe(false);
        const got = await load(manifestText(broken.manifest));
        expect(got.ok, broken.what).toBe(false);
        const top = broken.field.split(/[.[]/)[0]!;
        expect((got as { violations: string[] }).violations.join('\n'), broken.what).toContain(top);
      }),
      { numRuns: RUNS },
    );
  }, 600_000);

  it('never throws and never accepts what the schema refuses, for mutated manifests and edited YAML', async () => {
    await fc.assert(
      fc.asyncProperty(seeds, fc.boolean(), async (seed, editText) => {
        const r = rand(seed);
        const valid = validManifest(r, digest);
        const text = editText ? mutateText(r, manifestText(valid)).text : manifestText(mutateManifest(r, valid).manifest);
        const got = await load(text);
        if (got.ok) {
          expect(got.tools + got.containers).toBe(1);
          expect(schemaAccepts(text)).toBe(true);
        }
      }),
      { numRuns: RUNS },
    );
  }, 600_000);
});
