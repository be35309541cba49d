// The shape of the house, as ARCHITECTURE.md draws it: every import runs down a floor or stays
// in its own folder, and no files import each other in a circle. A new arrow that runs back up
// fails here with the file, the line and the two floors.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { cycles, importEdges, sourceFiles, type ImportEdge } from './helpers/import-graph.js';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * The floors, lowest first. A file may import files of its own room and of lower floors only.
 * A room is a top-level folder, a folder of a layer of host/ (`host/2-sandbox/engine`), a file
 * directly in a layer (`host/4-calls/call.ts`), the store (`host/3-store`, one room) or
 * `host/index.ts`. The layers of host/ are numbered so that a listing reads bottom to top.
 */
const FLOORS: readonly (readonly string[])[] = [
  ['abi'],
  ['capabilities'],
  ['host/1-base/hashing.ts', 'host/1-base/json-entry.ts', 'host/1-base/paths.ts', 'host/1-base/response.ts'],
  ['host/1-base/files'],
  ['host/2-sandbox/wasm'],
  ['host/2-sandbox/modules'],
  ['host/2-sandbox/engine'],
  ['host/3-store'],
  ['host/4-calls/policy'],
  ['host/4-calls/loader'],
  ['host/4-calls/artifacts'],
  ['host/4-calls/broker'],
  ['host/4-calls/runs'],
  ['host/4-calls/provenance'],
  ['host/4-calls/tools'],
  ['host/4-calls/registry.ts'],
  ['host/4-calls/call.ts'],
  ['host/4-calls/jobs'],
  [
    'host/5-host/docker-leftovers.ts',
    'host/5-host/host-jobs.ts',
    'host/5-host/host-records.ts',
    'host/5-host/inspection.ts',
    'host/5-host/store-upkeep.ts',
    'host/5-host/toolpacks.ts',
  ],
  ['host/5-host/host.ts'],
  ['host/6-faces/mcp', 'host/6-faces/devloop', 'host/6-faces/toolchain', 'host/6-faces/fanout'],
  ['host/index.ts'],
  ['conformance'],
  ['cli'],
];

/** The room of a file (see FLOORS). */
function roomOf(file: string): string {
  const parts = file.split('/');
  if (parts[0] !== 'host') return parts[0]!;
  if (parts.length === 2 || parts[1] === '3-store') return parts.slice(0, 2).join('/');
  return parts.slice(0, 3).join('/');
}

/**
 * The rooms above the Host (the faces, the command line, the package's API): below them they see
 * host/1-base and the Host (host/5-host) only, so the store, the engine and the call pipeline are
 * reached through the Host's typed operations and never directly.
 */
const ABOVE_THE_HOST = [
  'host/6-faces/mcp',
  'host/6-faces/devloop',
  'host/6-faces/toolchain',
  'host/6-faces/fanout',
  'host/index.ts',
  'cli',
];

/** Whether an import from a room above the Host reaches under it into host/ other than through the Host. */
function bypassesTheHost(e: ImportEdge): boolean {
  if (!ABOVE_THE_HOST.includes(roomOf(e.from)) || !e.to.startsWith('host/')) return false;
  return !['host/1-base/', 'host/5-host/', 'host/6-faces/'].some((p) => e.to.startsWith(p)) && e.to !== 'host/index.ts';
}

/**
 * What conformance/ may import from host/: it ships in dist/, so it holds to the Host as the faces
 * do, with two more rooms a reviewer needs: host/2-sandbox/wasm/index.ts (the decoder and the
 * instrumenter, as a library to read modules) and host/1-base. The store's white-box checks go
 * through its one diagnostic face, reached as host.diagnostics or openDiagnostics (host/5-host);
 * host/3-store/raw-access.ts is for tests alone.
 */
const CONFORMANCE_MAY_IMPORT = ['host/index.ts', 'host/2-sandbox/wasm/index.ts'];
const CONFORMANCE_MAY_IMPORT_UNDER = ['host/1-base/', 'host/5-host/', 'host/6-faces/'];

/** Whether an import from conformance/ reaches host/ other than through the rooms it may use. */
function conformanceBypassesTheHost(e: ImportEdge): boolean {
  if (roomOf(e.from) !== 'conformance' || !e.to.startsWith('host/')) return false;
  return !CONFORMANCE_MAY_IMPORT.includes(e.to) && !CONFORMANCE_MAY_IMPORT_UNDER.some((p) => e.to.startsWith(p));
}

function floorOf(room: string): number {
  const floor = FLOORS.findIndex((rooms) => rooms.includes(room));
  if (floor < 0) throw new Error(`${room} is on no floor: add it to FLOORS here and to ARCHITECTURE.md`);
  return floor;
}

const files = sourceFiles(ROOT, ['abi', 'capabilities', 'host', 'conformance', 'cli']);
const edges = importEdges(ROOT, files);

describe('the import graph', () => {
  it('reads the whole house: every file is on a floor and every import names a file', () => {
    expect(files.length).toBeGreaterThan(150);
    const known = new Set(files);
    for (const f of files) floorOf(roomOf(f));
    expect(edges.filter((e) => !known.has(e.to)).map((e) => `${e.from}:${e.line} -> ${e.to}`)).toEqual([]);
  });

  it('has no import that runs back up a floor, nor one across a floor to a neighbouring room', () => {
    const wrong = (e: ImportEdge): boolean => {
      const from = roomOf(e.from);
      const to = roomOf(e.to);
      return from !== to && floorOf(to) >= floorOf(from);
    };
    const shown = edges
      .filter(wrong)
      .map((e) => `${e.from}:${e.line} (${roomOf(e.from)}, floor ${floorOf(roomOf(e.from))}) -> ${e.to} (floor ${floorOf(roomOf(e.to))})`);
    expect(shown).toEqual([]);
  });

  it('lets the floors above the Host reach host/ only through the Host', () => {
    const shown = edges.filter(bypassesTheHost).map((e) => `${e.from}:${e.line} -> ${e.to}`);
    expect(shown).toEqual([]);
  });

  it('has no import cycles', () => {
    expect(cycles(edges)).toEqual([]);
  });
});

describe('the conformance suite and the store', () => {
  it('lets conformance/ reach host/ only through the Host, its faces, host/1-base and the wasm library', () => {
    const shown = edges.filter(conformanceBypassesTheHost).map((e) => `${e.from}:${e.line} -> ${e.to}`);
    expect(shown).toEqual([]);
  });

  it('names a conformance import of raw-access, the store, the call pipeline or the engine, a type import too', () => {
    const e = (to: string): ImportEdge => ({ from: 'conformance/checks/store/damage.ts', to, line: 1 });
    const planted = [
      e('host/3-store/raw-access.ts'),
      e('host/3-store/diagnostics.ts'),
      e('host/4-calls/runs/verify.ts'),
      e('host/2-sandbox/engine/extism.ts'),
      e('host/2-sandbox/wasm/index.ts'),
      e('host/5-host/store-upkeep.ts'),
      e('host/index.ts'),
    ];
    expect(planted.filter(conformanceBypassesTheHost).map((x) => x.to)).toEqual([
      'host/3-store/raw-access.ts',
      'host/3-store/diagnostics.ts',
      'host/4-calls/runs/verify.ts',
      'host/2-sandbox/engine/extism.ts',
    ]);
  });

  it('has no code of conformance/ call hostStore(), which is for tests', () => {
    const calls = files
      .filter((f) => f.startsWith('conformance/'))
      .flatMap((f) =>
        readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .flatMap((text, i) => (/\bhostStore\(/.test(text) ? [`${f}:${i + 1}`] : [])),
      );
    expect(calls).toEqual([]);
  });
});

describe('fan-out and the store', () => {
  it('names an import of the fan-out face or `helix job` that bypasses the Host, a type import too', () => {
    const e = (from: string, to: string): ImportEdge => ({ from, to, line: 1 });
    const planted = [
      e('host/6-faces/fanout/job-array.ts', 'host/5-host/host-jobs.ts'),
      e('host/6-faces/fanout/job-array.ts', 'host/1-base/files/bundle-files.ts'),
      e('host/6-faces/fanout/job-array.ts', 'host/3-store/open-store.ts'),
      e('cli/job-command.ts', 'host/4-calls/jobs/job-call.ts'),
    ];
    expect(planted.filter(bypassesTheHost).map((x) => x.to)).toEqual(['host/3-store/open-store.ts', 'host/4-calls/jobs/job-call.ts']);
  });

  it('has no production code of host/ or cli/ call hostStore(), which is for tests', () => {
    const calls = files
      .filter((f) => f.startsWith('host/') || f.startsWith('cli/'))
      .flatMap((f) =>
        readFileSync(path.join(ROOT, f), 'utf8')
          .split('\n')
          .flatMap((text, i) => (/\bhostStore\(/.test(text) && !text.startsWith('export function hostStore(') ? [`${f}:${i + 1}`] : [])),
      );
    expect(calls).toEqual([]);
  });
});

describe('the AssemblyScript SDK', () => {
  it('has no import cycles either', () => {
    const sdk = sourceFiles(ROOT, ['sdk-guest/assemblyscript/assembly']);
    expect(sdk.length).toBeGreaterThan(20);
    const sdkEdges = importEdges(ROOT, sdk);
    expect(sdkEdges.length).toBeGreaterThan(20);
    expect(cycles(sdkEdges)).toEqual([]);
  });
});

describe('the cycle finder', () => {
  it('finds a circle of three and a file importing itself, and nothing in a chain', () => {
    const e = (from: string, to: string): ImportEdge => ({ from, to, line: 1 });
    expect(cycles([e('a', 'b'), e('b', 'c'), e('c', 'a'), e('c', 'd')])).toEqual([['a', 'b', 'c']]);
    expect(cycles([e('s', 's')])).toEqual([['s']]);
    expect(cycles([e('a', 'b'), e('b', 'c')])).toEqual([]);
  });
});
