// The fuzz category, in the report's order. The property tests (test/fuzz-*.test.ts, `npm run
// fuzz`) found no failure, so these carry the fuzzing forward: each replays a fixed sample of
// generated cases, drawn from fixed seeds by the same generators (conformance/kit/fuzz-*.ts),
// against the real host.
import type { Check } from '../../check.js';
import { envelopeFuzzChecks } from './envelopes.js';
import { manifestFuzzChecks } from './manifests.js';
import { programFuzzChecks } from './programs.js';

/** The fuzz checks. */
export const fuzzChecks: readonly Check[] = [...manifestFuzzChecks, ...programFuzzChecks, ...envelopeFuzzChecks];
