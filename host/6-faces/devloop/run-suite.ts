// What `helix test` runs: the packs under a directory, loaded once (fail-closed) onto one engine,
// and each chain of fixtures (fixture-plan.ts) on a host over a fresh store of its own, so no kv
// value, artifact or recorded run of one fixture is seen by another, and a call replays only a
// run of its own chain. A fresh store costs an LMDB open; the packs are not loaded again.
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HelixError } from '../../../abi/index.js';
import { createHost, createHostParts } from '../../5-host/host.js';
import { type LoadedTool, loadPolicy, type LoadedPolicy, type WasmTool } from '../../5-host/toolpacks.js';
import { fixtureFiles, packDirOf, readFixtureFile } from './fixture-file.js';
import { planFixtures, type FixtureChain } from './fixture-plan.js';
import { runFixture, type FixtureResult } from './run-fixtures.js';

/** Options of openFixtureSuite. */
export interface FixtureSuiteOptions {
  /** A toolpack directory, or a directory holding toolpacks. */
  readonly toolpacksDir: string;
  readonly policyFile?: string;
  /** Keep each chain's store in `<keepUnder>/<tool id>/<first fixture>/`; default temporary stores, removed. */
  readonly keepUnder?: string;
}

/** One toolpack's fixtures as planned: chains, or why there are none to run. */
export type ToolpackPlan =
  | { readonly ok: true; readonly chains: FixtureChain[]; readonly names: string[] }
  | { readonly ok: false; readonly problem: string };

/** Loaded packs and the means to run their fixtures in fresh stores. */
export interface FixtureSuite {
  readonly policy: LoadedPolicy;
  readonly toolpacks: readonly LoadedTool[];
  /** The chains of `tool`'s fixtures, cut to the `only` names when given. */
  plan(tool: LoadedTool, only?: ReadonlySet<string>): ToolpackPlan;
  /** Runs the chains, each in a fresh store, reporting each fixture as it finishes. */
  run(tool: LoadedTool, chains: readonly FixtureChain[], report?: (r: FixtureResult) => void): Promise<FixtureResult[]>;
  /** Stops the engine and removes the temporary stores. */
  close(): Promise<void>;
}

/** Loads the policy and the packs (throws HelixError as createHost does) and starts one engine. */
export async function openFixtureSuite(o: FixtureSuiteOptions): Promise<FixtureSuite> {
  const policy = loadPolicy(o.policyFile);
  const shared = await createHostParts(policy, o.toolpacksDir);
  const { toolpacks, engine } = shared;
  const temp = o.keepUnder === undefined ? mkdtempSync(path.join(tmpdir(), 'helix-test-')) : undefined;
  let stores = 0;
  const storeDir = (tool: LoadedTool, chain: FixtureChain): string => {
    if (temp !== undefined) return path.join(temp, String(stores++));
    const dir = path.join(path.resolve(o.keepUnder!), tool.manifest.id, chain[0]!.entry.name);
    // A kept store from an earlier `helix test` is replaced; anything else there is not ours.
    if (existsSync(dir) && readdirSync(dir).length > 0) {
      if (!existsSync(path.join(dir, 'helix.mdb'))) {
        throw new HelixError('P-PRECOND-STORE', {
          message: `${dir} exists and is not a fixture store, so helix test will not replace it.`,
          details: { path: dir },
          hint: 'Pass helix test an empty or new directory as --home.',
        });
      }
      rmSync(dir, { recursive: true, force: true });
    }
    return dir;
  };
  return {
    policy,
    toolpacks,
    plan(tool, only) {
      let files: string[];
      try {
        files = fixtureFiles(tool);
      } catch (err) {
        return { ok: false, problem: `cannot read the fixtures folder: ${(err as Error).message}` };
      }
      if (files.length === 0) {
        const problem =
          tool.manifest.health === undefined
            ? 'no fixtures: set health.fixtures in the manifest to a folder of *.json fixtures'
            : `no *.json fixtures in ${tool.manifest.health.fixtures}/`;
        return { ok: false, problem };
      }
      const packDir = packDirOf(tool);
      const entries = files.map((f) => readFixtureFile(f, packDir));
      return { ok: true, chains: planFixtures(entries, tool.manifest.health!.fixtures, only), names: entries.map((e) => e.name) };
    },
    async run(tool, chains, report) {
      const results: FixtureResult[] = [];
      for (const chain of chains) {
        for (const r of await runChain(tool, chain, storeDir(tool, chain))) {
          report?.(r);
          results.push(r);
        }
      }
      return results;
    },
    async close() {
      await engine.close();
      if (temp !== undefined) rmSync(temp, { recursive: true, force: true });
    },
  };

  async function runChain(tool: LoadedTool, chain: FixtureChain, home: string): Promise<FixtureResult[]> {
    const host = await createHost({ toolpacksDir: o.toolpacksDir, policy, home, shared });
    const results: FixtureResult[] = [];
    try {
      const wasm = host.tools().find((t): t is WasmTool => t.kind === 'wasm' && (t as WasmTool).loaded === tool)!;
      let broken: string | undefined;
      for (const step of chain) {
        const fixture = path.basename(step.entry.file);
        if (broken !== undefined)
          results.push({ tool: tool.manifest.id, fixture, ok: false, problem: `not run: it continues ${broken}, which could not run` });
        else if (step.problem !== undefined) results.push({ tool: tool.manifest.id, fixture, ok: false, problem: step.problem });
        else results.push(await runFixture(host, wasm, step.entry));
        const last = results[results.length - 1]!;
        // A fixture that never made its call leaves no state for the next one to continue.
        if (broken === undefined && last.status === undefined) broken = fixture;
      }
    } finally {
      await host.close();
      if (o.keepUnder === undefined) rmSync(home, { recursive: true, force: true });
    }
    return results;
  }
}
