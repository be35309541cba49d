// `helix test` as an author meets it, through the built CLI on copies of an AssemblyScript pack
// outside the repository (sdk-guest/GUIDE.md, "Fixtures and `helix test`"): each fixture on a
// fresh store, `continues`, `--only`, replays named, and a `forbidden` answer failing a fixture
// unless it expects it.
import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeCounterPack, writeFixtures } from './helpers/counter-pack.js';
import { runCli } from './helpers/run-cli.js';
import { tempDir } from './helpers/toolpack.js';

const work = tempDir('helix-fixture-loop-');
afterAll(() => work.cleanup());

let built: string;
beforeAll(async () => {
  built = await makeCounterPack(path.join(work.dir, 'built'));
}, 180_000);

let copies = 0;
/** A copy of the built pack with these fixtures. */
function packWith(fixtures: Record<string, unknown>): string {
  const dir = path.join(work.dir, `copy-${copies++}`);
  cpSync(built, dir, { recursive: true });
  writeFixtures(dir, fixtures);
  return dir;
}

const COUNT = { op: 'count' };
/** The fixtures in the order their lines were printed. */
const order = (stdout: string): string[] => [...stdout.matchAll(/^(?:ok|FAIL) +counter\.tool (\S+?\.json)/gm)].map((m) => m[1]!);
const fuelOf = (stdout: string, fixture: string): number =>
  Number(new RegExp(`^ok    counter\\.tool ${fixture}\\.json \\(fuel (\\d+)\\)$`, 'm').exec(stdout)?.[1] ?? NaN);

interface JsonReport {
  ok: boolean;
  toolpacks: {
    fixtures: {
      fixture: string;
      ok: boolean;
      problem?: string;
      fuel_used?: number;
      replayed?: boolean;
      run_id?: string;
      forbidden?: { capability: string; calls: number; reason: string }[];
    }[];
  }[];
}
const byName = (stdout: string) =>
  new Map((JSON.parse(stdout) as JsonReport).toolpacks.flatMap((t) => t.fixtures).map((f) => [f.fixture, f]));

describe('helix test runs each fixture on a fresh store', () => {
  it('a kv value one fixture stores is not seen by the next', async () => {
    const dir = packWith({
      first: { input: COUNT, expect: { output: { count: 1 } } },
      second: { input: { ...COUNT, note: 'b' }, expect: { output: { count: 1 } } },
    });
    const r = await runCli(['test', dir]);
    expect(r.stdout).toMatch(/^ok {4}counter\.tool first\.json \(fuel \d+\)$/m);
    expect(r.stdout).toMatch(/^ok {4}counter\.tool second\.json \(fuel \d+\)$/m);
    expect(r.code, r.stdout + r.stderr).toBe(0);
  }, 120_000);

  it('two fixtures with the same input both execute, with the same fuel', async () => {
    const dir = packWith({
      first: { input: COUNT, expect: { output: { count: 1 } } },
      same: { input: COUNT, expect: { output: { count: 1 } } },
    });
    const r = await runCli(['test', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(fuelOf(r.stdout, 'first')).toBeGreaterThan(0);
    expect(fuelOf(r.stdout, 'same')).toBe(fuelOf(r.stdout, 'first'));
    expect(r.stdout).not.toContain('replayed');
    const json = await runCli(['test', dir, '--json']);
    expect([...byName(json.stdout).values()].map((f) => f.replayed)).toEqual([false, false]);
  }, 120_000);

  it("--home keeps each fixture's store, where helix runs finds its run", async () => {
    const dir = packWith({ first: { input: COUNT, expect: { output: { count: 1 } } } });
    const keep = path.join(work.dir, 'kept');
    for (let i = 0; i < 2; i++) {
      // The second time replaces the kept store: the call executes again, nothing is replayed.
      const r = await runCli(['test', dir, '--home', keep]);
      expect(r.code, r.stdout + r.stderr).toBe(0);
      expect(r.stdout).toMatch(/^ok {4}counter\.tool first\.json \(fuel \d+\)$/m);
    }
    const runs = await runCli(['runs', 'list', '--home', path.join(keep, 'counter.tool', 'first')]);
    expect(runs.code, runs.stderr).toBe(0);
    expect(runs.stdout).toContain('counter.tool');
    // A folder there that is not a store it made is left alone.
    const mine = path.join(work.dir, 'mine');
    mkdirSync(path.join(mine, 'counter.tool', 'first'), { recursive: true });
    writeFileSync(path.join(mine, 'counter.tool', 'first', 'notes.txt'), 'keep me');
    const refused = await runCli(['test', dir, '--home', mine]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `helix: P-PRECOND-STORE: ${path.join(mine, 'counter.tool', 'first')} exists and is not a fixture store, so helix test will not replace it.`,
    );
    expect(refused.stderr).toContain('hint: Pass helix test an empty or new directory as --home.');
    expect(readFileSync(path.join(mine, 'counter.tool', 'first', 'notes.txt'), 'utf8')).toBe('keep me');
  }, 120_000);
});

describe('continues', () => {
  it('runs a fixture after the one it names, in its store, and names a replay', async () => {
    const dir = packWith({
      first: { input: COUNT, expect: { output: { count: 1 } } },
      // biome-ignore lint/suspicious/noThenProperty: a fixture named then (then.json) in a map of fixtures, never awaited
      then: { continues: 'first', input: { ...COUNT, note: 'then' }, expect: { output: { count: 2 } } },
      // The same input as `first`, in its store: the recorded run answers.
      'then-again': { continues: 'then.json', input: COUNT, expect: { output: { count: 1 } } },
      apart: { input: { ...COUNT, note: 'apart' }, expect: { output: { count: 1 } } },
    });
    const r = await runCli(['test', dir]);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(order(r.stdout)).toEqual(['apart.json', 'first.json', 'then.json', 'then-again.json']);
    const firstRun = /^ok {4}counter\.tool then-again\.json \(replayed (run_[0-9a-f]{32}), fuel 0\)$/m.exec(r.stdout)?.[1];
    expect(firstRun, r.stdout).toBeDefined();
    const json = byName((await runCli(['test', dir, '--json'])).stdout);
    expect(json.get('then-again.json')).toMatchObject({ ok: true, replayed: true, run_id: json.get('first.json')!.run_id, fuel_used: 0 });
    expect(json.get('then.json')).toMatchObject({ ok: true, replayed: false });
  }, 120_000);

  it('a continues naming no fixture, or closing a cycle, fails naming the fixture file', async () => {
    const dir = packWith({
      lost: { continues: 'nowhere', input: COUNT, expect: { output: { count: 1 } } },
      'after-lost': { continues: 'lost', input: COUNT, expect: { output: { count: 1 } } },
      ping: { continues: 'pong', input: COUNT, expect: { output: { count: 1 } } },
      pong: { continues: 'ping.json', input: COUNT, expect: { output: { count: 1 } } },
      self: { continues: 'self', input: COUNT, expect: { output: { count: 1 } } },
      ok: { input: COUNT, expect: { output: { count: 1 } } },
    });
    const r = await runCli(['test', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'FAIL  counter.tool lost.json: continues "nowhere", but fixtures/ has no fixture nowhere.json (the fixtures are: after-lost, lost, ok, ping, pong, self)',
    );
    expect(r.stdout).toContain('FAIL  counter.tool after-lost.json: not run: it continues lost.json, which could not run');
    expect(r.stdout).toContain(
      'FAIL  counter.tool ping.json: continues pong.json, and the chain leads back to it: ping.json -> pong.json -> ping.json is a cycle',
    );
    expect(r.stdout).toContain(
      'FAIL  counter.tool pong.json: continues ping.json, and the chain leads back to it: pong.json -> ping.json -> pong.json is a cycle',
    );
    expect(r.stdout).toContain('FAIL  counter.tool self.json: continues itself; name the fixture it runs after');
    expect(r.stdout).toMatch(/^ok {4}counter\.tool ok\.json \(fuel \d+\)$/m);
    expect(r.stdout).toContain('1 passed, 5 failed (6 fixtures, 1 toolpack)');
  }, 120_000);
});

describe('--only', () => {
  const fixtures = {
    first: { input: COUNT, expect: { output: { count: 1 } } },
    // biome-ignore lint/suspicious/noThenProperty: a fixture named then (then.json) in a map of fixtures, never awaited
    then: { continues: 'first', input: { ...COUNT, note: 'then' }, expect: { output: { count: 2 } } },
    apart: { input: { ...COUNT, note: 'apart' }, expect: { output: { count: 1 } } },
    other: { input: { ...COUNT, note: 'other' }, expect: { output: { count: 1 } } },
  };

  it('runs the named fixtures, with or without .json, repeated or in a comma list, and what they continue', async () => {
    const dir = packWith(fixtures);
    const r = await runCli(['test', dir, '--only', 'then', '--only', 'apart.json,other']);
    expect(r.code, r.stdout + r.stderr).toBe(0);
    expect(order(r.stdout)).toEqual(['apart.json', 'first.json', 'then.json', 'other.json']);
    const one = await runCli(['test', dir, '--only', 'first']);
    expect(order(one.stdout)).toEqual(['first.json']);
    expect(one.stdout).toContain('1 passed, 0 failed (1 fixtures, 1 toolpack)');
  }, 120_000);

  it('a name that matches no fixture is exit 2, listing the fixtures', async () => {
    const dir = packWith(fixtures);
    const r = await runCli(['test', dir, '--only', 'frist']);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('helix: --only frist: no such fixture in');
    expect(r.stderr).toContain('the fixtures are: apart, first, other, then');
  }, 120_000);
});

describe('a forbidden answer', () => {
  it('fails the fixture, naming the capability, the code and why', async () => {
    const dir = packWith({ fetch: { input: { op: 'fetch' }, expect: { output: { fetched: false, code: 'A-AUTH-FORBIDDEN' } } } });
    const r = await runCli(['test', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /^FAIL {2}counter\.tool fetch\.json: the code called http\.request \(not in the manifest allowlist\) and was answered forbidden \(A-AUTH-FORBIDDEN\): list it in the manifest's capabilities\.allow, or expect the refusal with "forbidden": \["http\.request"\] in the fixture's expect \(fuel \d+\)$/m,
    );
    const json = byName((await runCli(['test', dir, '--json'])).stdout);
    expect(json.get('fetch.json')).toMatchObject({
      ok: false,
      forbidden: [{ capability: 'http.request', calls: 1, reason: 'not in the manifest allowlist' }],
    });
  }, 120_000);

  it('passes when the fixture expects it, and a refusal it expects but does not get fails', async () => {
    const dir = packWith({
      fetch: { input: { op: 'fetch' }, expect: { output: { fetched: false, code: 'A-AUTH-FORBIDDEN' }, forbidden: ['http.request'] } },
      'not-refused': { input: COUNT, expect: { output: { count: 1 }, forbidden: ['http.request'] } },
      'bad-name': { input: COUNT, expect: { output: { count: 1 }, forbidden: ['HTTP'] } },
      'empty-list': { input: COUNT, expect: { output: { count: 1 }, forbidden: [] } },
    });
    const r = await runCli(['test', dir]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/^ok {4}counter\.tool fetch\.json \(fuel \d+\)$/m);
    expect(r.stdout).toMatch(
      /^FAIL {2}counter\.tool not-refused\.json: expected a forbidden answer to http\.request, but the run received none \(fuel \d+\)$/m,
    );
    expect(r.stdout).toContain(
      'FAIL  counter.tool bad-name.json: not a valid fixture: expect.forbidden.0: must be a capability name such as "http.request"',
    );
    expect(r.stdout).toContain(
      'FAIL  counter.tool empty-list.json: not a valid fixture: expect.forbidden: list at least one capability, or leave forbidden out',
    );
    expect(existsSync(path.join(dir, 'fixtures', 'fetch.json'))).toBe(true);
  }, 120_000);
});
