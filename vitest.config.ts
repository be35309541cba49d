// Test configuration: two tiers as vitest projects (README, "Tests and CI"), and the coverage
// floors per module that `npm test` enforces. Unit tests sit beside the code, integration tests under test/.
import { defineConfig } from 'vitest/config';
import { COVERAGE_MODULES, coverageThresholds } from './scripts/coverage-modules.js';

/** Where test files live; every file found here belongs to exactly one tier (test/tiers.test.ts). */
export const TEST_FILES = [
  'abi/**/*.test.ts',
  'host/**/*.test.ts',
  'capabilities/**/*.test.ts',
  'cli/**/*.test.ts',
  'conformance/**/*.test.ts',
  'sdk-guest/**/test/**/*.test.ts',
  'plugins/*/test/**/*.test.ts',
  'test/**/*.test.ts',
];

const NEVER = ['**/node_modules/**', 'dist/**'];

/**
 * The slow tier, by kind rather than by duration alone: what starts or needs the services
 * (dockerd, the Slurm cluster); installs or packs the package; builds packs (every bundled pack
 * rebuilt to its digest, `helix build` on copies, packs made by `helix new` outside the
 * repository); runs the bundled toolpacks' own suites and the C packs' (each builds its pack and
 * checks it against seqkit or a reference on generated files, some larger than the guest's
 * memory); starts a `helix` process per case (the command line's and `helix serve`'s suites,
 * fan-out's job processes); writes gigabytes; runs the conformance report; fuzzes; kills, races
 * or pauses processes on one store; or runs the benchmark. Every other test file is in the fast
 * tier: unit tests, the guest SDKs' tests, integration tests with a real Host in the test
 * process, and files that start only a few `helix` processes (the fixed run ids of
 * test/identity-vectors.test.ts among them). An entry is a file, or a glob for a whole kind.
 */
export const SLOW: readonly string[] = [
  // The services of scripts/services.sh: dockerd and the Slurm cluster, brought up by the tests.
  'test/services.test.ts',
  'test/container-tool.test.ts',
  'test/docker-broker.test.ts',
  'test/docker-run.test.ts',
  'test/docker-secrets.test.ts',
  'test/docker-sweep.test.ts',
  'test/docker-workspace.test.ts',
  'test/slurm-broker.test.ts',
  'test/slurm-builtins.test.ts',
  'test/slurm-engine.test.ts',
  'test/slurm-states.test.ts',
  'test/fanout-slurm.test.ts',
  // `helix conformance` on every engine, with the services and headless Chromium.
  'test/conformance-report.test.ts',
  // Installs and packs: npm install or pack, a fresh machine, the install's build of the packs,
  // every bundled pack rebuilt to its digest, `helix build` on copies of a pack, packs made by
  // `helix new` and built outside the repository through the CLI, and a second MCP client run through npx.
  'test/fresh-machine.test.ts',
  'test/install-outside.test.ts',
  'test/pack-reuse.test.ts',
  'test/build-wasm.test.ts',
  'host/6-faces/toolchain/bundled-toolpacks.test.ts',
  'host/6-faces/toolchain/build-toolpack.test.ts',
  'test/author-journey.test.ts',
  'test/devloop.test.ts',
  'test/new-bare.test.ts',
  'test/dev-watch.test.ts',
  'test/fixture-loop.test.ts',
  'test/stale-build.test.ts',
  'test/trap-sites.test.ts',
  'test/mcp-inspector.test.ts',
  // The bundled toolpacks' own suites, and the C packs and reader against seqkit (test/bundled-plugins.test.ts
  // runs every pack's fixtures in the fast tier).
  'plugins/*/test/**/*.test.ts',
  'sdk-guest/c/test/packs.test.ts',
  'sdk-guest/c/test/seq-reader.test.ts',
  // A `helix` process per case: the command line's and `helix serve`'s suites.
  'test/cli.test.ts',
  'test/artifacts-cli.test.ts',
  'test/decisions-cli.test.ts',
  'test/guest-tables-cli.test.ts',
  'test/identity-edits.test.ts',
  'test/json-bounds-cli.test.ts',
  'test/loader-files.test.ts',
  'test/mcp-startup.test.ts',
  'test/mcp-transport.test.ts',
  'test/ro-crate-validation.test.ts',
  'test/runs-show-refusals.test.ts',
  'test/no-store-on-refusal.test.ts',
  'test/secret-cli.test.ts',
  'test/store-check.test.ts',
  'test/store-damage.test.ts',
  // Fan-out without a cluster: `helix job run` processes, each on a store of its own.
  'test/job-bundle.test.ts',
  // Big data: a 4 GiB FASTQ through the CLI; a 10 GB one through each template's tool; the
  // templates measured on 16 MiB files for the guide's table; the guide's walk to a 3 GB file.
  'test/big-data.test.ts',
  'test/template-big-data.test.ts',
  'test/template-costs.test.ts',
  'test/guide-walk.test.ts',
  // Fuzz: property tests on random programs, manifests, envelopes and JSON (`npm run fuzz` runs them longer).
  'test/fuzz-capability-args.test.ts',
  'test/fuzz-envelopes.test.ts',
  'test/fuzz-instrumenter.test.ts',
  'test/fuzz-manifest.test.ts',
  'test/json-fuzz.test.ts',
  // Processes killed, raced or paused under gdb on one store.
  'test/store-concurrency.test.ts',
  'test/crash.test.ts',
  'test/store-gc.test.ts',
  'test/store-interrupted.test.ts',
  'test/store-lifecycle.test.ts',
  'test/store-open-race.test.ts',
  // The benchmark's quick run.
  'test/bench-quick.test.ts',
];

export default defineConfig({
  test: {
    exclude: NEVER,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    projects: [
      { extends: true, test: { name: 'fast', include: TEST_FILES, exclude: [...NEVER, ...SLOW] } },
      { extends: true, test: { name: 'slow', include: [...SLOW], exclude: NEVER } },
    ],
    // On with --coverage (npm test). V8 sees the test processes only: code the tests run in
    // spawned CLI processes or in the engine's worker threads is not counted.
    coverage: {
      provider: 'v8',
      include: COVERAGE_MODULES.map((m) => m.glob),
      exclude: ['**/*.test.ts', '**/*.d.ts', '**/assembly/**', '**/test/**', 'dist/**', '**/node_modules/**'],
      reporter: ['text-summary', 'json-summary'],
      reportsDirectory: 'coverage',
      thresholds: coverageThresholds(),
    },
  },
});
