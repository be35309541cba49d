// A tool whose output breaks its own output schema: every face that shows the failure to a
// person names each violation by its JSON pointer, with what the schema wanted and what came
// (helix test and helix dev through the fixture's line, the MCP result text, the command line's
// error lines), and the envelope keeps all of them in error.details.violations.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureLine } from '../cli/test-command.js';
import { runFixtures } from '../host/6-faces/devloop/run-fixtures.js';
import { errorText } from '../host/6-faces/mcp/results.js';
import { createHost, type Host, type WasmTool } from '../host/index.js';
import { tempDir } from './helpers/toolpack.js';

const REPO = path.resolve(import.meta.dirname, '..');
const work = tempDir('helix-contract-paths-');
const pack = path.join(work.dir, 'gc');
let host: Host;

beforeAll(async () => {
  // The bundled seq.gc_content, its output schema changed under it: gc_count must now be a
  // string, and a property the tool never writes is required.
  cpSync(path.join(REPO, 'plugins', 'seq-gc-content'), pack, { recursive: true });
  const schemaFile = path.join(pack, 'schemas', 'output.json');
  const schema = JSON.parse(readFileSync(schemaFile, 'utf8'));
  schema.properties.gc_count = { type: 'string' };
  schema.properties.checksum = { type: 'string' };
  schema.required.push('checksum');
  writeFileSync(schemaFile, JSON.stringify(schema, null, 2));
  host = await createHost({ toolpacksDir: pack, home: path.join(work.dir, 'home') });
});
afterAll(async () => {
  await host?.close();
  work.cleanup();
});

const tool = (): WasmTool => host.tools().find((t): t is WasmTool => t.kind === 'wasm' && t.id === 'seq.gc_content')!;

describe('an output that breaks its schema', () => {
  it('lists each violation with its pointer, what was wanted and what came, in the envelope', async () => {
    const r = await host.call({ call_id: 'c1', tool_id: 'seq.gc_content', input: { sequence: 'ACGT' } });
    expect(r.status).toBe('terminal_error');
    expect(r.error?.code).toBe('C-CONTRACT-OUTPUT-SCHEMA');
    const violations = r.error?.details.violations as { path: string; message: string }[];
    expect(violations.map((v) => v.path).sort()).toEqual(['', '/gc_count']);
    expect(violations.find((v) => v.path === '/gc_count')?.message).toBe('must be a string (found an integer, 2)');
    expect(violations.find((v) => v.path === '')?.message).toBe('is missing required property "checksum"');
  });

  it('shows them under the fixture line of helix test and helix dev', async () => {
    const results = await runFixtures(host, tool());
    const basic = results.find((x) => x.fixture === 'basic.json');
    expect(basic?.ok).toBe(false);
    const lines = fixtureLine(basic!).split('\n');
    expect(lines[0]).toMatch(
      /^FAIL {2}seq\.gc_content basic\.json: expected success, got C-CONTRACT-OUTPUT-SCHEMA: .*2 schema violations\. \(fuel \d+\)$/,
    );
    expect(
      lines
        .slice(1)
        .map((l) => l.trim())
        .sort(),
    ).toEqual(['(root): is missing required property "checksum"', '/gc_count: must be a string (found an integer, 4)']);
    // A fixture that expects the tool's own error still passes: the output is never checked.
    const invalid = results.find((x) => x.fixture === 'invalid-character.json');
    expect(invalid?.ok).toBe(true);
  });

  it('shows them in the text an MCP client reads', async () => {
    const r = await host.call({ call_id: 'c2', tool_id: 'seq.gc_content', input: { sequence: 'GG' } });
    const text = errorText(r).split('\n');
    expect(text[0]).toBe(`terminal_error C-CONTRACT-OUTPUT-SCHEMA: ${r.error?.message}`);
    expect(text).toContain('  (root): is missing required property "checksum"');
    expect(text).toContain('  /gc_count: must be a string (found an integer, 2)');
  });
});
