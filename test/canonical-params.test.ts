// Canonical params (ABI-RUNID-010): the input schema's defaults are filled in before the run's
// identity is computed and before the guest sees the input, so a call that leaves a defaulted
// field out and one that spells the default are one run. Real modules (an echo guest answers
// with the input it was given), a real Host and store.
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../host/index.js';
import { echoModule } from './helpers/guest-wat.js';
import { tempDir, writeToolpack } from './helpers/toolpack.js';

const INPUT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  additionalProperties: false,
  required: ['q'],
  properties: {
    q: { type: 'string' },
    bin_width: { type: 'integer', minimum: 1, default: 10 },
    options: {
      type: 'object',
      default: {},
      properties: { flag: { type: 'boolean', default: false }, note: { type: 'string' } },
    },
    // A default inside anyOf is an annotation (JSON Schema fills none there): it loads, and is not applied.
    mode: { anyOf: [{ type: 'string', default: 'fast' }, { type: 'integer' }] },
  },
};

const work = tempDir('helix-canonical-');
let host: Host;
beforeAll(async () => {
  const packs = path.join(work.dir, 'packs');
  await writeToolpack(packs, { id: 'canon.echo', module: echoModule(), inputSchema: INPUT_SCHEMA });
  await writeToolpack(packs, {
    id: 'canon.output',
    module: echoModule(),
    outputSchema: { type: 'object', properties: { added: { type: 'string', default: 'never' } } },
  });
  host = await createHost({ toolpacksDir: packs, home: path.join(work.dir, 'home') });
});
afterAll(async () => {
  await host?.close();
  work.cleanup();
});

describe('canonical params', () => {
  it('gives the guest the input with every default of its schema filled in, nested ones too', async () => {
    const request = { q: 'a' };
    const r = await host.call({ call_id: 'c1', tool_id: 'canon.echo', input: request });
    expect(r).toMatchObject({ status: 'success', replayed: false });
    expect(r.output).toEqual({ q: 'a', bin_width: 10, options: { flag: false } });
    // The caller's object is never changed.
    expect(request).toEqual({ q: 'a' });
  });

  it('makes a defaulted field and the same value spelled out one run, and another value another run', async () => {
    const left = await host.call({ call_id: 'c2', tool_id: 'canon.echo', input: { q: 'b' } });
    const spelled = await host.call({ call_id: 'c3', tool_id: 'canon.echo', input: { q: 'b', bin_width: 10, options: { flag: false } } });
    expect(left.replayed).toBe(false);
    expect(spelled).toMatchObject({ status: 'success', replayed: true, run_id: left.run_id });
    const partly = await host.call({ call_id: 'c4', tool_id: 'canon.echo', input: { options: {}, q: 'b' } });
    expect(partly).toMatchObject({ replayed: true, run_id: left.run_id });
    const other = await host.call({ call_id: 'c5', tool_id: 'canon.echo', input: { q: 'b', bin_width: 20 } });
    expect(other).toMatchObject({ status: 'success', replayed: false, output: { q: 'b', bin_width: 20, options: { flag: false } } });
    expect(other.run_id).not.toBe(left.run_id);
  });

  it('records the canonical input in the run: its params and the input the guest read', async () => {
    const r = await host.call({ call_id: 'c6', tool_id: 'canon.echo', input: { q: 'c' } });
    const shown = host.runs.show(r.run_id!);
    expect((shown.params as { input: unknown }).input).toEqual({ q: 'c', bin_width: 10, options: { flag: false } });
  });

  it('checks the input after the defaults: a default is validated like any value', async () => {
    const r = await host.call({ call_id: 'c7', tool_id: 'canon.echo', input: { q: 'd', bin_width: 0 } });
    expect(r).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-INPUT' } });
  });

  it('never fills an output: the output schema is a check, not a source of values', async () => {
    const r = await host.call({ call_id: 'c8', tool_id: 'canon.output', input: { x: 1 } });
    expect(r).toMatchObject({ status: 'success', output: { x: 1 } });
    expect(r.output).not.toHaveProperty('added');
  });
});
