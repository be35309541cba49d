// The built-in tools' published record schema is derived from the record's zod schema
// (abi/records.ts), so what helix.artifact_get, _import and _list publish and what they return agree.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ArtifactRecordSchema, PolicySchema } from '../../../abi/index.js';
import { tempDir } from '../../../test/helpers/toolpack.js';
import { importInline } from '../artifacts/index.js';
import { loadPolicy } from '../policy/load-policy.js';
import { openStore, type Store } from '../../3-store/open-store.js';
import { builtinSchemaProblems, builtinTools } from './builtins.js';
import type { Tool } from './tool.js';

const tools = builtinTools(PolicySchema.parse({ version: 1, tools: { allow: [] } }));
const tool = (name: string): Tool => tools.find((t) => t.id === `helix.${name}`)!;
type ObjectSchema = { required: string[]; properties: Record<string, { type: unknown }> };
const recordSchema = tool('artifact_get').outputSchema as ObjectSchema;
// The summary is the stored record less where it came from and its preview.
const SUMMARY_FIELDS = Object.keys(ArtifactRecordSchema.shape).filter((k) => k !== 'source' && k !== 'preview');

let t: { dir: string; cleanup: () => void };
let store: Store;
beforeAll(() => {
  t = tempDir('helix-builtins-');
  store = openStore(path.join(t.dir, 'home'));
});
afterAll(async () => {
  await store?.close();
  t?.cleanup();
});

describe('built-in record schema', () => {
  it('lists every field of the record summary, each required, in the record order', () => {
    expect(Object.keys(recordSchema.properties)).toEqual(SUMMARY_FIELDS);
    // compression is always there (null when the bytes are stored as they are): required too.
    expect(recordSchema.required).toEqual(SUMMARY_FIELDS);
  });

  it('gives each field the JSON type(s) of the zod schema, nullable ones with null', () => {
    expect(recordSchema.properties).toMatchObject({
      id: { type: 'string' },
      size: { type: 'integer' },
      compression: { type: ['string', 'null'] },
      label: { type: ['string', 'null'] },
      created_at: { type: 'integer' },
      created_by_run: { type: ['string', 'null'] },
    });
  });

  it('is the one schema of artifact_get, artifact_import and the items of artifact_list', () => {
    expect(tool('artifact_import').outputSchema).toEqual(recordSchema);
    expect((tool('artifact_list').outputSchema as { properties: { artifacts: { items: unknown } } }).properties.artifacts.items).toEqual(
      recordSchema,
    );
  });

  it('accepts what helix.artifact_get returns for a real record, which has exactly its fields', async () => {
    const record = await importInline(store, '>r1\nACGT\n', { label: 'reads' });
    const get = tool('artifact_get');
    const outcome = await get.execute({
      input: { artifact_id: record.id },
      inputBytes: new Uint8Array(),
      limits: get.limits,
      store,
      policy: loadPolicy(undefined, { env: { PWD: t.dir } }),
      runId: `run_${'0'.repeat(32)}`,
      boundary: undefined,
      deadlineMs: Date.now() + 60_000,
      signal: new AbortController().signal,
    });
    expect(outcome.kind).toBe('output');
    const output = (outcome as { output: { output: Record<string, unknown> } }).output.output;
    expect(Object.keys(output)).toEqual(SUMMARY_FIELDS);
    expect(output).toMatchObject({ id: record.id, sha256: record.sha256, size: 9, type: 'fasta', compression: null, label: 'reads' });
    expect(get.validateOutput(output)).toEqual([]);
  });
});

describe('the built-in tools', () => {
  it('have schemas that pass the JSON Schema check, so the host compiles them on first use unchecked', () => {
    expect(builtinSchemaProblems()).toEqual([]);
  });
});
