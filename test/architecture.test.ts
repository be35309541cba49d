// The shape of the house, as ARCHITECTURE.md draws it: every import runs down a floor or stays
// in its own room, no files import each other in a circle, the rooms above the Host reach below
// it only through the Host, and the store's seams stay inside the store. A new arrow that breaks
// one of them fails here with the file and the line.
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
 * The rooms above the Host: the faces, the package's API, the conformance suite (it ships in
 * dist/) and the command line. Of host/ they see host/1-base, the Host (host/5-host), the faces
 * and the package's API only, so the store, the engine and the call pipeline are reached through
 * the Host's typed operations and never directly. The suite may also read modules with the
 * decoder and instrumenter (host/2-sandbox/wasm/index.ts, a library); its white-box store
 * checks go through the store's one diagnostic face, reached as host.diagnostics or
 * openDiagnostics (host/5-host).
 */
const ABOVE_THE_HOST: Readonly<Record<string, readonly string[]>> = {
  'host/6-faces/mcp': [],
  'host/6-faces/devloop': [],
  'host/6-faces/toolchain': [],
  'host/6-faces/fanout': [],
  'host/index.ts': [],
  conformance: ['host/2-sandbox/wasm/index.ts'],
  cli: [],
};

/** Whether an import from a room above the Host reaches under it into host/ other than through the Host. */
function bypassesTheHost(e: ImportEdge): boolean {
  const extra = ABOVE_THE_HOST[roomOf(e.from)];
  if (extra === undefined || !e.to.startsWith('host/')) return false;
  if (e.to === 'host/index.ts' || extra.includes(e.to)) return false;
  return !['host/1-base/', 'host/5-host/', 'host/6-faces/'].some((p) => e.to.startsWith(p));
}

/** The seams of the store that only host/3-store may import: its raw LMDB handle, and the raw access tests plant damage with. */
const STORE_SEAMS = ['host/3-store/handle.ts', 'host/3-store/raw-access.ts'];

/** Whether an import reaches a seam of the store from outside host/3-store. */
function reachesStoreSeam(e: ImportEdge): boolean {
  return STORE_SEAMS.includes(e.to) && roomOf(e.from) !== 'host/3-store';
}

function floorOf(room: string): number {
  const floor = FLOORS.findIndex((rooms) => rooms.includes(room));
  if (floor < 0) throw new Error(`${room} is on no floor: add it to FLOORS here and to ARCHITECTURE.md`);
  return floor;
}

const files = sourceFiles(ROOT, ['abi', 'capabilities', 'host', 'conformance', 'cli']);
const edges = importEdges(ROOT, files);
/** Production code that is not on a floor: the benchmark and the scripts, held to the store's seams too. */
const tools = sourceFiles(ROOT, ['bench', 'scripts']);

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

describe('the store boundary', () => {
  it("keeps the store's handle and raw access inside host/3-store (production code; tests may plant damage)", () => {
    const shown = [...edges, ...importEdges(ROOT, tools)].filter(reachesStoreSeam).map((e) => `${e.from}:${e.line} -> ${e.to}`);
    expect(shown).toEqual([]);
  });

  it('has no production code call hostStore(), which is for tests', () => {
    const calls = [...files, ...tools].flatMap((f) =>
      readFileSync(path.join(ROOT, f), 'utf8')
        .split('\n')
        .flatMap((text, i) => (/\bhostStore\(/.test(text) && !text.startsWith('export function hostStore(') ? [`${f}:${i + 1}`] : [])),
    );
    expect(calls).toEqual([]);
  });
});

describe('the rules themselves', () => {
  it("name an import that bypasses the Host from each kind of room above it, a type import too, and let the Host's faces through", () => {
    const e = (from: string, to: string): ImportEdge => ({ from, to, line: 1 });
    const planted = [
      e('conformance/checks/store/damage.ts', 'host/3-store/raw-access.ts'),
      e('conformance/checks/store/damage.ts', 'host/3-store/diagnostics.ts'),
      e('conformance/checks/store/damage.ts', 'host/4-calls/runs/verify.ts'),
      e('conformance/checks/store/damage.ts', 'host/2-sandbox/engine/extism.ts'),
      e('conformance/checks/store/damage.ts', 'host/2-sandbox/wasm/index.ts'),
      e('conformance/checks/store/damage.ts', 'host/5-host/store-upkeep.ts'),
      e('host/6-faces/fanout/job-array.ts', 'host/3-store/open-store.ts'),
      e('host/6-faces/fanout/job-array.ts', 'host/2-sandbox/wasm/index.ts'),
      e('host/6-faces/fanout/job-array.ts', 'host/5-host/host-jobs.ts'),
      e('host/6-faces/mcp/tools.ts', 'host/1-base/files/bundle-files.ts'),
      e('cli/job-command.ts', 'host/4-calls/jobs/job-call.ts'),
      e('cli/main.ts', 'host/index.ts'),
      e('host/5-host/host.ts', 'host/3-store/open-store.ts'),
    ];
    expect(planted.filter(bypassesTheHost).map((x) => `${x.from} -> ${x.to}`)).toEqual([
      'conformance/checks/store/damage.ts -> host/3-store/raw-access.ts',
      'conformance/checks/store/damage.ts -> host/3-store/diagnostics.ts',
      'conformance/checks/store/damage.ts -> host/4-calls/runs/verify.ts',
      'conformance/checks/store/damage.ts -> host/2-sandbox/engine/extism.ts',
      'host/6-faces/fanout/job-array.ts -> host/3-store/open-store.ts',
      'host/6-faces/fanout/job-array.ts -> host/2-sandbox/wasm/index.ts',
      'cli/job-command.ts -> host/4-calls/jobs/job-call.ts',
    ]);
  });

  it("name an import of the store's seams from outside the store, and let the store use its own", () => {
    const e = (from: string, to: string): ImportEdge => ({ from, to, line: 1 });
    const planted = [
      e('host/4-calls/runs/run-store.ts', 'host/3-store/raw-access.ts'),
      e('bench/run.ts', 'host/3-store/handle.ts'),
      e('host/3-store/blobs.ts', 'host/3-store/handle.ts'),
    ];
    expect(planted.filter(reachesStoreSeam).map((x) => x.from)).toEqual(['host/4-calls/runs/run-store.ts', 'bench/run.ts']);
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
