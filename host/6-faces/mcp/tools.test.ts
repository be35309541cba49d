// Helix tools as MCP tool definitions: built-ins by their short names with their hints, and the
// outputSchema that admits the tool's output and the error envelope under the SDK client's Ajv.
import AjvModule from 'ajv';
import type { ValidateFunction } from 'ajv';
import { describe, expect, it } from 'vitest';
import { PolicySchema } from '../../../abi/index.js';
import { builtinTools } from '../../4-calls/tools/builtins.js';
import { exposeTools, mcpOutputSchema } from './tools.js';

// The settings of the MCP SDK's default validator (validation/ajv-provider.js), which clients
// use to check structuredContent against outputSchema.
// ajv is CommonJS: under NodeNext its default import is the module, whose default is the class.
const Ajv = AjvModule as unknown as new (options: Record<string, unknown>) => { compile(schema: object): ValidateFunction };
const clientAjv = () => new Ajv({ strict: false, validateFormats: true, validateSchema: false, allErrors: true });

const failure = {
  call_id: 'c1',
  status: 'invalid_request',
  error: { code: 'I-REQ-INPUT', message: 'bad', details: {}, hint: 'fix it' },
  side_effects: [],
  metrics: { duration_ms: 1, fuel_used: 0, memory_peak_pages: 0 },
  provenance: { tool_id: 't.x', tool_version: '1.0.0', digest: null },
  warnings: [],
  commit_token: null,
  run_id: null,
  replayed: false,
};

describe('MCP tool definitions', () => {
  it('exposeTools gives the built-ins their short names, schemas and hints', () => {
    const exposed = exposeTools(builtinTools(PolicySchema.parse({ version: 1, tools: { allow: ['*'] } })));
    expect(exposed.map((t) => t.name).sort()).toEqual([
      'artifact_get',
      'artifact_import',
      'artifact_list',
      'artifact_preview',
      'run_get',
      'run_verify',
      'slurm_job_collect',
      'slurm_job_get',
    ]);
    const get = exposed.find((t) => t.name === 'artifact_get')!;
    expect(get.definition.inputSchema).toMatchObject({ type: 'object', required: ['artifact_id'] });
    expect(get.definition.annotations).toEqual({
      title: 'helix.artifact_get',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    });
    expect(exposed.find((t) => t.name === 'artifact_import')!.definition.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: false,
    });
  });

  it('mcpOutputSchema keeps an object schema as one branch and admits the error envelope as the other', () => {
    const schema = {
      $schema: 'https://json-schema.org/draft/2020-12/schema',
      type: 'object',
      required: ['n'],
      additionalProperties: false,
      properties: { n: { $ref: '#/$defs/file_count' } },
      $defs: { file_count: { type: 'integer', minimum: 0 } },
    };
    const { schema: out, wrapsOutput } = mcpOutputSchema(schema);
    expect(wrapsOutput).toBe(false);
    expect(out).toMatchObject({ type: 'object', $schema: schema.$schema });
    const validate = clientAjv().compile(out);
    expect(validate({ n: 3 })).toBe(true);
    expect(validate({ n: -1 })).toBe(false);
    expect(validate({ n: 3, extra: 1 })).toBe(false);
    expect(validate(failure)).toBe(true);
    expect(validate({ ...failure, status: 'success' })).toBe(false);
  });

  it('mcpOutputSchema wraps a schema that is not an object as {"value": ...}', () => {
    const { schema, wrapsOutput } = mcpOutputSchema({ type: 'array', items: { type: 'integer' } });
    expect(wrapsOutput).toBe(true);
    const validate = clientAjv().compile(schema);
    expect(validate({ value: [1, 2] })).toBe(true);
    expect(validate([1, 2])).toBe(false);
    expect(validate(failure)).toBe(true);
  });
});
