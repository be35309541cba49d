// Fuzz checks of manifests: 30 manifests broken on purpose and 10 YAML texts edited until the
// schema refuses them are each refused at load, naming the file and the field; valid generated
// manifests load and serve (ABI-LOAD-001..003, ABI-LOAD-006).
import { parse as parseYaml } from 'yaml';
import { ToolManifestSchema } from '../../../abi/index.js';
import { expect, type Check, type PackSpec } from '../../check.js';
import { breakManifest, manifestText, mutateText, validManifest } from '../../kit/fuzz-manifests.js';
import { rand, sampleSeeds } from '../../kit/fuzz-random.js';
import { echoModule } from '../../kit/guest-wat.js';
import { digestOf } from '../../kit/toolpack.js';
import { wat2wasm } from '../../kit/wat.js';
import { once, showSample } from './shared.js';

/** The echo module's bytes and digest, for manifests written by hand. */
const echo = once(async () => {
  const bytes = await wat2wasm(echoModule());
  return { bytes, digest: digestOf(bytes) };
});

// ---- manifests -------------------------------------------------------------------------------

interface ManifestCase {
  readonly file: string;
  readonly text: string;
  readonly what: string;
  /** The top-level field a violation must name; undefined for YAML edits (only the file). */
  readonly field?: string;
}

/** 30 manifests broken on purpose and 10 YAML texts edited until the schema refuses them. */
const brokenManifests = once(async (): Promise<ManifestCase[]> => {
  const { digest } = await echo();
  const cases: ManifestCase[] = sampleSeeds(0xf022_0001, 30).map((seed, i) => {
    const r = rand(seed);
    const broken = breakManifest(r, validManifest(r, digest));
    return { file: `fuzz_m${i}.tool.yaml`, text: manifestText(broken.manifest), what: broken.what, field: broken.field.split(/[.[]/)[0]! };
  });
  let i = 0;
  for (const seed of sampleSeeds(0xf022_0002, 200)) {
    if (i === 10) break;
    const r = rand(seed);
    const edited = mutateText(r, manifestText(validManifest(r, digest)));
    if (schemaAccepts(edited.text)) continue;
    cases.push({ file: `fuzz_t${i}.tool.yaml`, text: edited.text, what: `YAML edited: ${edited.what}` });
    i += 1;
  }
  return cases;
});

/** Whether the manifest schema accepts a YAML text (as a plain YAML reader reads it). */
function schemaAccepts(text: string): boolean {
  try {
    return ToolManifestSchema.safeParse(parseYaml(text, { maxAliasCount: 100 })).success;
  } catch {
    return false;
  }
}

/** A pack whose manifest is written as given (it overwrites the one writeToolpack writes). */
function rawManifestPack(id: string, file: string, module: Uint8Array, text: string): PackSpec {
  return { id, module, extraFiles: { [file]: text } };
}

/** The checks of this file, in the report's order. */
export const manifestFuzzChecks: readonly Check[] = [
  {
    id: 'fuzz.broken-manifests',
    title: '40 generated manifests that break the schema are each refused at load, named by file',
    category: 'fuzz',
    abi: ['ABI-LOAD-001', 'ABI-LOAD-002'],
    engines: ['helix'],
    expected:
      'the host refuses to start with P-PRECOND-MANIFEST-INVALID; every one of the 40 manifest files (30 broken on purpose, 10 YAML texts edited until the schema refuses them) is named by a violation, the 30 with the field that was broken',
    async packs() {
      const { bytes } = await echo();
      return (await brokenManifests()).map((c) =>
        rawManifestPack(c.file.replace(/_/, '.').replace('.tool.yaml', ''), c.file, bytes, c.text),
      );
    },
    async run(ctx) {
      const cases = await brokenManifests();
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}, not P-PRECOND-MANIFEST-INVALID`);
      const violations = (refusal.details.violations ?? []) as string[];
      const missing: string[] = [];
      for (const c of cases) {
        const mine = violations.filter((v) => v.includes(`/${c.file}`) || v.startsWith(c.file));
        if (mine.length === 0 || (c.field !== undefined && !mine.some((v) => v.includes(c.field!)))) missing.push(`${c.file} (${c.what})`);
      }
      expect(
        missing.length === 0,
        `${missing.length} broken manifests were not named as they should be: ${missing.slice(0, 5).join('; ')}`,
      );
      expect(
        !violations.some((v) => v.includes('_canary')),
        `the canary's valid manifest was named: ${violations.filter((v) => v.includes('_canary')).join('; ')}`,
      );
      ctx.observe('manifests', cases.length);
      ctx.observe('violations', violations.length);
      ctx.observe('sample_violations', violations.slice(0, 6));
      showSample(
        ctx,
        'what was broken (first 12)',
        cases.slice(0, 12).map((c) => `${c.file}: ${c.what}`),
      );
      ctx.show({ label: cases[0]!.file, lang: 'yaml', text: cases[0]!.text });
    },
  },
  {
    id: 'fuzz.valid-manifests',
    title: '10 generated valid manifests load and are served',
    category: 'fuzz',
    abi: ['ABI-LOAD-001', 'ABI-LOAD-002', 'ABI-LOAD-005'],
    engines: ['helix'],
    expected:
      'the host starts over 10 random valid manifests (limits, capabilities, network origins, declared outputs, schemas) and offers each tool at its id and version',
    async packs() {
      const { bytes, digest } = await echo();
      return sampleSeeds(0xf022_0007, 10).map((seed, i) => {
        const m = validManifest(rand(seed), digest);
        return rawManifestPack(`fuzz.v${i}`, `fuzz_v${i}.tool.yaml`, bytes, manifestText(m));
      });
    },
    async run(ctx) {
      const host = await ctx.host();
      const { digest } = await echo();
      const wanted = sampleSeeds(0xf022_0007, 10).map((seed) => validManifest(rand(seed), digest));
      const offered = new Set(host.tools().map((t) => `${t.id}@${t.version}`));
      const absent = wanted.filter((m) => !offered.has(`${String(m.id)}@${String(m.version)}`));
      expect(absent.length === 0, `${absent.length} valid manifests are not offered: ${absent.map((m) => m.id).join(', ')}`);
      ctx.observe(
        'tools',
        wanted.map((m) => `${String(m.id)}@${String(m.version)}`),
      );
      ctx.show({ label: 'fuzz_v0.tool.yaml', lang: 'yaml', text: manifestText(wanted[0]!) });
    },
  },
];
