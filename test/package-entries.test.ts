// The package's public API as a user meets it: a project outside the repository with `helix` in
// its node_modules imports "helix", "helix/mcp" and "helix/abi" by name through Node's own
// resolution of package.json "exports" (the built dist/). The exact names of "." and "./mcp" are
// pinned, so a store, an engine or another internal that leaks into them fails here.
import { execFile } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { tempDir } from './helpers/toolpack.js';

const run = promisify(execFile);
const project = tempDir('helix-entries-');

beforeAll(() => {
  mkdirSync(path.join(project.dir, 'node_modules'));
  symlinkSync(packageRoot(), path.join(project.dir, 'node_modules', 'helix'), 'dir');
  writeFileSync(path.join(project.dir, 'package.json'), JSON.stringify({ name: 'embedder', private: true, type: 'module' }));
});
afterAll(() => project.cleanup());

/** The names an ES module import of `specifier` gives, from a script in the user's project. */
async function namesOf(specifier: string): Promise<string[]> {
  const script = `const m = await import(${JSON.stringify(specifier)}); process.stdout.write(JSON.stringify(Object.keys(m).sort()));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project.dir });
  return JSON.parse(stdout) as string[];
}

describe('the package entries, imported by name', () => {
  it('"helix" is the host: create a host, errors, policy, loading and checking toolpacks; no store, no engine', async () => {
    expect(await namesOf('helix')).toEqual([
      'HelixError',
      'bundledPluginsDir',
      'bundledToolpacksDir',
      'createHost',
      'findManifests',
      'formatViolation',
      'isHelixError',
      'loadPolicy',
      'loadToolpacks',
      'loadToolpacksOrThrow',
    ]);
  });

  it('"helix/mcp" is the MCP server with its bounds, tool names and resource constants', async () => {
    expect(await namesOf('helix/mcp')).toEqual([
      'ARTIFACT_TEMPLATE',
      'ARTIFACT_URI_PREFIX',
      'DEFAULT_LOG_LEVEL',
      'DEFAULT_MAX_BACKLOG_BYTES',
      'DEFAULT_MAX_IN_FLIGHT',
      'DEFAULT_READ_BOUNDS',
      'MCP_TOOL_NAME_PATTERN',
      'MESSAGE_BYTES_RANGE',
      'MESSAGE_MARGIN_BYTES',
      'RESOURCE_PAGE_SIZE',
      'checkMaxMessageBytes',
      'clientConfig',
      'createMcpServer',
      'defaultMaxMessageBytes',
      'mcpToolName',
    ]);
  });

  it('"helix/abi" is the ABI vocabulary, with nothing of the store or the engine', async () => {
    const names = await namesOf('helix/abi');
    expect(names).toEqual(
      expect.arrayContaining([
        'HelixError',
        'isHelixError',
        'ERROR_CODES',
        'RequestEnvelopeSchema',
        'ResponseEnvelopeSchema',
        'RunRecordSchema',
      ]),
    );
    expect(names.filter((n) => /store|engine|db$/i.test(n))).toEqual([]);
  });

  it('a module that is not an entry cannot be imported by name', async () => {
    await expect(namesOf('helix/dist/host/3-store/open-store.js')).rejects.toMatchObject({
      stderr: expect.stringContaining('ERR_PACKAGE_PATH_NOT_EXPORTED'),
    });
  });

  it('a host created through "helix" serves a call and reads its run back, and "helix/mcp" builds a server on it', async () => {
    const home = path.join(project.dir, 'home');
    const script = [
      "import { createHost } from 'helix';",
      "import { createMcpServer } from 'helix/mcp';",
      `const host = await createHost({ home: ${JSON.stringify(home)} });`,
      'try {',
      "  const r = await host.call({ tool_id: 'helix.artifact_list', input: {} });",
      '  const server = createMcpServer(host);',
      "  process.stdout.write(JSON.stringify({ status: r.status, stored: host.runs.get(r.run_id)?.status, store: 'store' in host, tools: server.tools.length > 0 }));",
      '} finally { await host.close(); }',
    ].join('\n');
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: project.dir });
    expect(JSON.parse(stdout)).toEqual({ status: 'success', stored: 'succeeded', store: false, tools: true });
  }, 60_000);
});
