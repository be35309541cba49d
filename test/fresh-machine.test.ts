// The README's quick start on a fresh machine: a copy of the working tree outside the repository,
// a PATH with Node and npm but no clang, wasm-ld or seqkit; `npm install` keeps the shipped C
// module, `npm start` serves every bundled tool over MCP, `npx helix call` answers.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { copyWorkingTree, freshBin, freshEnv, runCommand, type CommandRun } from './helpers/fresh-machine.js';

// The install fetches from npm's cache (~/.npm) and builds the host and the toolpacks: minutes
// on a loaded machine. The bound only stops a hang.
const INSTALL_BOUND_MS = 20 * 60_000;
// A command after the install: seconds when the machine is idle, far more when it is shared.
const COMMAND_BOUND_MS = 5 * 60_000;

/** The MCP names of the bundled tools (plugins/). */
const BUNDLED_TOOLS = [
  'fasta-headers',
  'fastq-filter',
  'seq-gc_content',
  'seq-gc_skew',
  'seq-kmer_count',
  'seq-revcomp',
  'seq-stats',
  'seq-translate',
  'vcf-summary',
];

let root: string;
let clone: string;
let bin: string;
let env: NodeJS.ProcessEnv;
let install: CommandRun;

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'helix-fresh-'));
  bin = await freshBin(path.join(root, 'bin'));
  env = freshEnv(bin);
  clone = path.join(root, 'helix');
  await copyWorkingTree(clone);
  install = await runCommand(path.join(bin, 'npm'), ['install'], { cwd: clone, env, killAfterMs: INSTALL_BOUND_MS });
}, INSTALL_BOUND_MS + 120_000);

afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('the quick start on a machine without a C compiler or seqkit', () => {
  it('runs with a PATH that has node and npm but no clang, wasm-ld or seqkit', async () => {
    const found = await runCommand(
      '/bin/sh',
      ['-c', 'for c in node npm clang wasm-ld seqkit; do command -v $c >/dev/null && echo $c; done; true'],
      {
        cwd: clone,
        env,
        killAfterMs: 60_000,
      },
    );
    expect(found.stdout.trim().split('\n')).toEqual(['node', 'npm']);
  });

  it('npm install exits 0 and keeps the shipped C module with one line', () => {
    const output = `${install.stdout}\n${install.stderr}`;
    expect({ code: install.code, failures: output.match(/^FAIL .*$/gm) ?? [] }).toEqual({ code: 0, failures: [] });
    const kept = output.match(/^kept .*$/gm) ?? [];
    expect(kept).toEqual([
      'kept  plugins/seq-gc-skew: clang not found; using the shipped build/gc-skew.wasm, which matches the manifest digest (apt-get install clang lld to rebuild)',
    ]);
    expect(output).not.toMatch(/^skip /m);
  });

  it(
    'npm start serves helix over MCP with every bundled tool, the C one included',
    async () => {
      const transport = new StdioClientTransport({
        command: path.join(bin, 'npm'),
        args: ['start'],
        cwd: clone,
        env: env as Record<string, string>,
        stderr: 'pipe',
      });
      let stderr = '';
      transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      const client = new Client({ name: 'fresh-machine-test', version: '1.0.0' });
      try {
        // npm prints its script header on stdout before helix starts; the SDK's client skips lines
        // that are not JSON-RPC, which is why the README registers `node .../main.js serve` instead.
        await client.connect(transport, { timeout: COMMAND_BOUND_MS });
        const names = (await client.listTools(undefined, { timeout: COMMAND_BOUND_MS })).tools.map((tool) => tool.name);
        expect({ names: BUNDLED_TOOLS.filter((name) => !names.includes(name)), stderr: names.length > 0 ? '' : stderr }).toEqual({
          names: [],
          stderr: '',
        });
      } finally {
        await client.close();
      }
    },
    2 * COMMAND_BOUND_MS,
  );

  it(
    'npx helix call prints a success envelope',
    async () => {
      const call = await runCommand(path.join(bin, 'npx'), ['helix', 'call', 'seq.gc_content', '--input', '{"sequence":"GATTACA"}'], {
        cwd: clone,
        env,
        killAfterMs: COMMAND_BOUND_MS,
      });
      expect({ code: call.code, stderr: call.code === 0 ? '' : call.stderr }).toEqual({ code: 0, stderr: '' });
      const envelope = JSON.parse(call.stdout);
      expect(envelope).toMatchObject({ status: 'success', output: { length: 7, gc_count: 2, at_count: 5 } });
    },
    COMMAND_BOUND_MS + 60_000,
  );
});

describe('the test command on a machine where it cannot install packages', () => {
  it('stops with one message naming the missing packages and the apt-get command', async () => {
    const noApt = await freshBin(path.join(root, 'bin-no-apt'), /^(clang|wasm-ld|lld|ld\.lld|ld64\.lld|seqkit|apt-get)/);
    const setup = await runCommand('/bin/sh', [path.join(clone, 'scripts', 'test-setup.sh')], {
      cwd: clone,
      env: freshEnv(noApt),
      killAfterMs: 60_000,
    });
    expect(setup).toEqual({
      code: 1,
      stdout: '',
      stderr: [
        'npm test needs these Debian packages, missing here: clang lld seqkit',
        'cannot install them (apt-get not found); install them, then run npm test again:',
        '  sudo apt-get update && sudo apt-get install -y clang lld seqkit',
        '',
      ].join('\n'),
    });
  });
});
