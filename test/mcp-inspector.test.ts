// A second MCP client: the MCP Inspector's command-line mode (@modelcontextprotocol/inspector
// 0.15.0, a devDependency) driving the built `helix serve` with the bundled toolpacks, offline.
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CallToolResult, ListToolsResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { findManifests } from '../host/index.js';
import { mcpToolName } from '../host/6-faces/mcp/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const home = tempDir('helix-mcp-inspector-');
afterAll(() => home.cleanup());

/** Runs the inspector CLI against `helix serve`; its stdout is the JSON result of one method. */
async function inspect(method: string[]): Promise<unknown> {
  // `--no --`: never install, and everything after `--` is the inspector's, not npm's.
  const args = [
    '--no',
    '--',
    '@modelcontextprotocol/inspector',
    '--cli',
    'node',
    'dist/cli/main.js',
    'serve',
    '-e',
    `HELIX_HOME=${home.dir}`,
    '--method',
    ...method,
  ];
  // Offline: the inspector must run from node_modules, never fetch anything.
  const { stdout } = await run('npx', args, { cwd: packageRoot(), env: { ...process.env, npm_config_offline: 'true' }, timeout: 30_000 });
  return JSON.parse(stdout);
}

/** The MCP names the server should offer: the built-ins, and one per bundled manifest's id but the container toolpacks', which the default policy does not grant. */
function expectedToolNames(): string[] {
  const builtins = [
    'artifact_get',
    'artifact_import',
    'artifact_list',
    'artifact_preview',
    'run_get',
    'run_verify',
    'slurm_job_collect',
    'slurm_job_get',
  ];
  const manifests = findManifests(path.join(packageRoot(), 'plugins')).map(
    (file) => parseYaml(readFileSync(file, 'utf8')) as { id: string; kind?: string },
  );
  const ids = manifests.filter((m) => m.kind !== 'container').map((m) => m.id);
  return [...builtins, ...new Set(ids)].map((name) => (builtins.includes(name) ? name : mcpToolName(name, 'wasm'))).sort();
}

describe('the MCP Inspector CLI as a client of helix serve', () => {
  it('--method tools/list lists the bundled tools and the built-ins with schemas and annotations', async () => {
    const { tools } = (await inspect(['tools/list'])) as ListToolsResult;
    expect(tools.map((t) => t.name).sort()).toEqual(expectedToolNames());
    expect(tools.length).toBeGreaterThan(8);
    const gc = tools.find((t) => t.name === 'seq-gc_content')!;
    expect(gc.inputSchema).toMatchObject({ type: 'object', required: ['sequence'] });
    expect(gc.annotations).toMatchObject({ readOnlyHint: true, idempotentHint: true, openWorldHint: false });
  });

  it('--method tools/call calls a bundled tool and prints its structured result', async () => {
    const r = (await inspect(['tools/call', '--tool-name', 'seq-gc_content', '--tool-arg', 'sequence=GATTACA'])) as CallToolResult;
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({ length: 7, gc_count: 2, at_count: 5 });
    expect(r._meta).toMatchObject({ 'helix/run_id': expect.stringMatching(/^run_/), 'helix/status': 'success' });
  });

  it('--method tools/call prints a tool failure as an isError result with the envelope', async () => {
    const r = (await inspect(['tools/call', '--tool-name', 'seq-gc_content', '--tool-arg', 'sequence=GATXACA'])) as CallToolResult;
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toMatchObject({ status: 'invalid_request', error: { code: 'I-REQ-INPUT' } });
  });

  it('--method resources/templates/list shows the artifact URI template', async () => {
    const r = (await inspect(['resources/templates/list'])) as { resourceTemplates: Array<{ uriTemplate: string }> };
    expect(r.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['helix://artifact/{id}']);
  });
});
