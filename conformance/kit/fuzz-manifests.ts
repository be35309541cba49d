// Random tool manifests for fuzzing the loader (ABI-LOAD-001, -002, -005): valid manifests over a
// given module, mutations that are sure to break abi/schemas/tool-manifest.json (each says what it
// broke), mutations that may or may not, and edits of the YAML text itself (deleted spans, YAML
// punctuation, aliases, re-indented and duplicated lines).
import { stringify } from 'yaml';
import { mutateJson, randomJson, type Json } from './fuzz-json.js';
import type { Rand } from './fuzz-random.js';

type Manifest = Record<string, unknown>;

const LOWER = 'abcdefghijklmnopqrstuvwxyz';
const IDENT = `${LOWER}0123456789_`;
/** Capabilities a manifest may allow without more settings (http.request needs network origins). */
const PLAIN_CAPABILITIES = [
  'clock.now_unix',
  'log.emit',
  'kv.get',
  'kv.put',
  'kv.delete',
  'kv.list',
  'artifact.stat',
  'artifact.read',
  'artifact.list',
  'artifact.write',
  'secrets.get.db_password',
  'secrets.get.api_key',
];

const ident = (r: Rand, max = 8): string => r.chars(LOWER, 1) + r.chars(IDENT, r.int(0, max));

/** A JSON Schema that compiles and accepts objects. */
function objectSchema(r: Rand): Manifest {
  const schema: Manifest = { type: 'object' };
  if (r.chance(0.3)) schema.$schema = 'https://json-schema.org/draft/2020-12/schema';
  if (r.chance(0.5)) {
    const props: Record<string, unknown> = {};
    for (let i = r.int(1, 3); i > 0; i -= 1)
      props[ident(r, 5)] = { type: r.pick(['string', 'integer', 'number', 'boolean', 'array', 'object']) };
    schema.properties = props;
    if (r.chance(0.5)) schema.required = r.some(Object.keys(props));
  }
  if (r.chance(0.3)) schema.additionalProperties = r.chance(0.5);
  return schema;
}

/** A manifest the loader must accept, over a helix/v1 module of one page whose digest is `digest` at `module`. */
export function validManifest(r: Rand, digest: string, module = 'tool.wasm'): Manifest {
  const id = Array.from({ length: r.int(2, 3) }, () => ident(r)).join('.');
  const limits: Manifest = { maxInputBytes: r.int(1, 10_000_000), maxOutputBytes: r.int(1, 10_000_000) };
  if (r.chance(0.5)) limits.fuel = r.int(1, 1e12);
  if (r.chance(0.5)) limits.maxMemoryPages = r.int(1, 65_536);
  if (r.chance(0.3)) limits.maxCapabilityCalls = r.int(0, 1_000_000);
  if (r.chance(0.2))
    limits.perInputMiB = Object.fromEntries(
      r.some([
        ['fuel', r.int(1, 1e9)],
        ['maxCapabilityCalls', 0.25],
        ['timeoutMs', r.int(1, 1000)],
      ] as const),
    );
  const allow = r.some(PLAIN_CAPABILITIES, 0.3);
  const capabilities: Manifest = { abiVersion: r.pick([1, 2]), allow };
  if (r.chance(0.3)) {
    allow.push('http.request');
    capabilities.network = [`https://${r.chance(0.3) ? '*.' : ''}${ident(r, 5).replace(/_/g, '')}.example.org:${r.int(1, 65_535)}`];
  }
  const m: Manifest = {
    id,
    version: `${r.int(0, 20)}.${r.int(0, 20)}.${r.int(0, 20)}${r.chance(0.2) ? `-rc.${r.int(0, 9)}` : ''}`,
    contractVersion: `v${r.int(1, 9)}`,
    description: r.chars(`${LOWER} ,.`, r.int(1, 80)).replace(/^ +| +$/g, '') || 'x',
    abi: 'helix/v1',
    module,
    digest,
    deterministic: r.pick(['pure', 'idempotent', 'side_effectful']),
    timeoutMs: r.int(1, 86_400_000),
    limits,
    inputSchema: objectSchema(r),
    outputSchema: objectSchema(r),
  };
  if (r.chance(0.8) || allow.length > 0) m.capabilities = capabilities;
  if (r.chance(0.2)) m.entrypoint = 'execute';
  if (r.chance(0.3))
    m.declaredOutputs = Array.from({ length: r.int(1, 2) }, (_, i) => ({
      role: `out${i}`,
      type: r.pick(['fasta', 'json', 'text']),
      ...(r.chance(0.5) ? { label: 'an output' } : {}),
    }));
  return m;
}

const clone = (m: Manifest): Manifest => structuredClone(m);

/** A manifest changed so that it breaks the schema, and what was broken. */
export interface BrokenManifest {
  readonly manifest: Manifest;
  /** The field and what was done to it. */
  readonly what: string;
  /** The field path the loader should name (dotted, as its violations write it). */
  readonly field: string;
}

const REQUIRED = [
  'id',
  'version',
  'contractVersion',
  'description',
  'abi',
  'module',
  'digest',
  'deterministic',
  'timeoutMs',
  'limits',
  'inputSchema',
  'outputSchema',
];

/** Values of the wrong type for a field of `kind`. */
function wrongType(r: Rand, kind: 'string' | 'number' | 'object' | 'array'): Json {
  for (;;) {
    const v = randomJson(r, 1);
    const t = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
    if (t !== kind && !(kind === 'object' && t === 'object')) return v;
  }
}

/** A mutation of `m` that the schema must refuse (by construction). */
export function breakManifest(r: Rand, valid: Manifest): BrokenManifest {
  const m = clone(valid);
  const limits = m.limits as Manifest;
  const cases: (() => BrokenManifest)[] = [
    () => {
      const f = r.pick(REQUIRED);
      delete m[f];
      return { manifest: m, what: `required field ${f} deleted`, field: f };
    },
    () => {
      const f = r.pick(['name', 'Id', 'timeout_ms', 'capability', 'kind2', 'inputschema', '__proto_', ident(r, 6).toUpperCase()]);
      m[f] = randomJson(r);
      return { manifest: m, what: `unknown field ${f} added`, field: f };
    },
    () => {
      m.id = r.pick(['Seq.gc', '1seq.gc', 'seq', 'seq..gc', 'seq.gc.', '.seq', 'seq-gc.x', 'seq.Gc', '', 'seq.gc ']);
      return { manifest: m, what: `id set to ${JSON.stringify(m.id)}`, field: 'id' };
    },
    () => {
      m.version = r.pick(['1.0', 'v1.0.0', '01.0.0', '1.0.0.0', '', 'latest', '1.0.0 ', '=1.0.0']);
      return { manifest: m, what: `version set to ${JSON.stringify(m.version)}`, field: 'version' };
    },
    () => {
      m.contractVersion = r.pick(['1', 'v0', 'V1', 'v01', 'v', 'v1.0']);
      return { manifest: m, what: `contractVersion set to ${JSON.stringify(m.contractVersion)}`, field: 'contractVersion' };
    },
    () => {
      m.digest = r.pick([
        `sha256:${'A'.repeat(64)}`,
        `sha256:${'a'.repeat(63)}`,
        `md5:${'a'.repeat(32)}`,
        'a'.repeat(64),
        `${String(m.digest)} `,
      ]);
      return { manifest: m, what: `digest set to ${JSON.stringify(m.digest)}`, field: 'digest' };
    },
    () => {
      m.timeoutMs = r.pick<Json>([0, -1, 1.5, 86_400_001, '1000', null, 2 ** 53]);
      return { manifest: m, what: `timeoutMs set to ${JSON.stringify(m.timeoutMs)}`, field: 'timeoutMs' };
    },
    () => {
      const f = r.pick(['maxInputBytes', 'maxOutputBytes', 'fuel']);
      limits[f] = r.pick<Json>([0, -5, 0.5, '100', null, 2 ** 53, [] as Json[]]);
      return { manifest: m, what: `limits.${f} set to ${JSON.stringify(limits[f])}`, field: `limits.${f}` };
    },
    () => {
      limits.maxMemoryPages = r.pick([0, 65_537, 1.5, -1]);
      return { manifest: m, what: `limits.maxMemoryPages set to ${limits.maxMemoryPages}`, field: 'limits.maxMemoryPages' };
    },
    () => {
      limits[r.pick(['memory', 'maxFuel', 'cpu'])] = 1;
      return { manifest: m, what: 'unknown field added to limits', field: 'limits' };
    },
    () => {
      m.abi = r.pick(['helix/v2', 'wasi', 'extism', 'HELIX/V1', '']);
      return { manifest: m, what: `abi set to ${JSON.stringify(m.abi)}`, field: 'abi' };
    },
    () => {
      m.deterministic = r.pick(['maybe', 'Pure', true, 'yes', null] as Json[]);
      return { manifest: m, what: `deterministic set to ${JSON.stringify(m.deterministic)}`, field: 'deterministic' };
    },
    () => {
      m.capabilities = { abiVersion: 1, allow: [r.pick(['Clock.now', 'clock', '', 'kv.get ', '1kv.get', 'kv..get'])] };
      return { manifest: m, what: 'capabilities.allow holds a name that is not a capability name', field: 'capabilities.allow[0]' };
    },
    () => {
      m.capabilities = { abiVersion: r.pick([0, 3, '1', null] as Json[]), allow: [] };
      return { manifest: m, what: 'capabilities.abiVersion is neither 1 nor 2', field: 'capabilities.abiVersion' };
    },
    () => {
      m.capabilities = {
        abiVersion: 1,
        allow: ['http.request'],
        network: [
          r.pick([
            'https://example.org',
            'ftp://example.org:21',
            'https://Example.org:443',
            'https://*.*.org:443',
            'https://example.org:443/path',
          ]),
        ],
      };
      return { manifest: m, what: 'capabilities.network holds an origin that is not scheme://host:port', field: 'capabilities.network[0]' };
    },
    () => {
      m.declaredOutputs = [{ role: r.pick(['log', 'Report', '1x', '', 'a-b']), type: 'text' }];
      return { manifest: m, what: 'a declared output with a reserved or malformed role', field: 'declaredOutputs[0].role' };
    },
    () => {
      m.description = r.chance(0.5) ? '' : 'x'.repeat(2001);
      return { manifest: m, what: `description of ${(m.description as string).length} characters`, field: 'description' };
    },
    () => {
      const f = r.pick(['inputSchema', 'outputSchema']);
      m[f] = r.pick<Json>([[], 'object', 1, null, true]);
      return { manifest: m, what: `${f} is not an object`, field: f };
    },
    () => {
      const f = r.pick(['id', 'version', 'module', 'digest', 'description']);
      m[f] = wrongType(r, 'string');
      return { manifest: m, what: `${f} set to ${JSON.stringify(m[f])}`, field: f };
    },
    () => {
      m.limits = wrongType(r, 'object');
      return { manifest: m, what: `limits set to ${JSON.stringify(m.limits)}`, field: 'limits' };
    },
  ];
  return r.pick(cases)();
}

/** A mutation of `m` that may or may not keep it valid: a field set to a random value, deleted, or added. */
export function mutateManifest(r: Rand, valid: Manifest): { manifest: Manifest; what: string } {
  const { value, what } = mutateJson(r, valid as Json);
  return { manifest: value as Manifest, what };
}

/** The YAML text of a manifest. */
export const manifestText = (m: Manifest): string => stringify(m);

/** Edits of YAML text: spans deleted or duplicated, YAML punctuation, aliases, indentation, odd characters. */
export function mutateText(r: Rand, text: string): { text: string; what: string } {
  let t = text;
  const edits: string[] = [];
  for (let n = r.int(1, 3); n > 0; n -= 1) {
    const at = r.int(0, t.length);
    const lines = t.split('\n');
    const line = r.int(0, Math.max(0, lines.length - 1));
    switch (r.int(0, 7)) {
      case 0: {
        const len = r.int(1, 20);
        t = t.slice(0, at) + t.slice(at + len);
        edits.push(`deleted ${len} characters at ${at}`);
        break;
      }
      case 1: {
        const s = r.chars(':-[]{}&*!|>\'"%@`#,?\n\t \\', r.int(1, 4));
        t = t.slice(0, at) + s + t.slice(at);
        edits.push(`inserted ${JSON.stringify(s)} at ${at}`);
        break;
      }
      case 2:
        lines.splice(line, 0, lines[line] ?? '');
        t = lines.join('\n');
        edits.push(`duplicated line ${line + 1}`);
        break;
      case 3:
        lines[line] = (r.chance(0.5) ? ' '.repeat(r.int(1, 4)) : '') + (lines[line] ?? '').trimStart();
        t = lines.join('\n');
        edits.push(`re-indented line ${line + 1}`);
        break;
      case 4: {
        const s = r.pick([
          'a: &x [1, 2]\nb: *x\n',
          'x: *nope\n',
          '--- \n',
          '...\n',
          '%YAML 1.2\n---\n',
          'k: !!binary aGk=\n',
          '? [a]\n: 1\n',
          '<<: {id: x}\n',
          'id: !!int 5\n',
          '\ufeff',
          '\u0000',
          '\ud800',
          'é',
        ]);
        t = t.slice(0, at) + s + t.slice(at);
        edits.push(`inserted ${JSON.stringify(s)} at ${at}`);
        break;
      }
      case 5:
        t = t.slice(0, at);
        edits.push(`cut at ${at}`);
        break;
      case 6: {
        const other = r.int(0, Math.max(0, lines.length - 1));
        [lines[line], lines[other]] = [lines[other]!, lines[line]!];
        t = lines.join('\n');
        edits.push(`swapped lines ${line + 1} and ${other + 1}`);
        break;
      }
      default: {
        const colon = t.indexOf(': ', at);
        if (colon >= 0) {
          const end = t.indexOf('\n', colon);
          const v = JSON.stringify(randomJson(r, 1));
          t = t.slice(0, colon + 2) + v + (end < 0 ? '' : t.slice(end));
          edits.push(`value after character ${colon} set to ${v}`);
        }
      }
    }
  }
  return { text: t, what: edits.join('; ') };
}
