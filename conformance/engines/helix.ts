// The helix engine: helix/v1 modules (alloc, dealloc, execute answering an envelope) on Helix's
// own metered engine. Its guests come from the kit's helix/v1 builders; the capability caller is
// the raw caller (kit/caps-kit.ts), which sends any bytes and hands back every answer in one run.
import type { EngineAdapter, EngineGuests, Phase } from './adapter.js';
import { CANARY_ID } from '../kit/canary.js';
import { RAW_LIMITS, rawAnswers, rawCallerModule, rawInput, SCRIPT_LIMITS } from '../kit/caps-kit.js';
import { abiPrelude, echoModule, fixedOutputModule, numberResultModule, runningModule } from '../kit/guest-wat.js';
import {
  BAD_POINTER_CAUGHT,
  bytesOutputModule,
  bytesRequestModule,
  CATCHING_RECURSION,
  CATCHING_SPIN,
  okEnvelope,
  PANIC_WITH_CALL,
  stormGuest,
  throwingGuest,
} from '../kit/io-guests.js';
import { HELIX_EXECUTION_COUNTER, HELIX_STATE_COUNTER, helixPlant } from '../kit/state-guests.js';
import { packWith } from '../kit/toolpack.js';

/** An execute that answers nothing (an empty output), after `stmts`. */
const execute = (stmts: string): string => `(func (export "execute") (param i32 i32) (result i64) ${stmts} (i64.const 0))`;

const memory = (o: { pages?: number; maxPages?: number }): { pages?: number; maxPages?: number } => ({
  ...(o.pages === undefined ? {} : { pages: o.pages }),
  ...(o.maxPages === undefined ? {} : { maxPages: o.maxPages }),
});

/** helix/v1 guests. */
export const helixGuests: EngineGuests = {
  echo: (o = {}) => echoModule('', memory(o)),
  bare: (stmts = '', o = {}) => `(module ${abiPrelude(memory(o))} ${execute(stmts)} ${o.extra ?? ''})`,
  running: (stmts, o = {}) => runningModule(stmts, o),
  number: (expr, o = {}) =>
    numberResultModule(`${expr} (i64.extend_i32_u)`, { ...memory(o), extra: o.extra ?? '', locals: o.locals ?? '' }),
  answering: (value) => fixedOutputModule(okEnvelope(value)),
  oversized: (bytes) =>
    `(module ${abiPrelude({ pages: Math.ceil((65536 + bytes) / 65536) + 1 })} (func (export "execute") (param i32 i32) (result i64) (i64.or (i64.shl (i64.const 65536) (i64.const 32)) (i64.const ${bytes}))))`,
  bytes: (mode) => (mode === 'request' ? bytesRequestModule() : bytesOutputModule()),
  memory64: `(module (memory (export "memory") i64 1)
  (func (export "alloc") (param i32) (result i32) (i32.const 1024))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) (i64.const 0)))`,
  sharedMemory: (stmts) => `(module
  (memory (export "memory") 1 16 shared)
  (global $bump (mut i32) (i32.const 4096))
  (func (export "alloc") (param $n i32) (result i32) (global.get $bump))
  (func (export "dealloc") (param i32 i32))
  (func (export "execute") (param i32 i32) (result i64) ${stmts} (i64.const 0)))`,
  outsideImport: {
    module: `(module (import "env" "exfiltrate" (func $x)) ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (call $x) (i64.const 0)))`,
    rule: 'ABI-IMPORT-001',
  },
  stateCounter: { module: HELIX_STATE_COUNTER, fresh: { value: 10101 } },
  executionCounter: HELIX_EXECUTION_COUNTER,
  storm: (calls, o = {}) =>
    o.trap === true ? stormGuest(calls, `${o.after ?? ''}(unreachable)`, PANIC_WITH_CALL) : stormGuest(calls, o.after ?? ''),
  badPointer: { module: BAD_POINTER_CAUGHT, details: { import: 'capability_call', ptr: 0x7ffffff0, len: 64 } },
  throwing: (phase) => throwingGuest(phase),
  catchingSpin: CATCHING_SPIN,
  catchingRecursion: CATCHING_RECURSION,
  plant: (grow) => helixPlant(grow),
  planted(output) {
    const v = Number(output.value);
    return { flags: Math.floor(v / 1_000_000), ptr: v % 1_000_000 };
  },
};

/** The helix engine. */
export const helixAdapter: EngineAdapter = {
  name: 'helix',
  abi: 'helix/v1',
  entry: 'execute',
  manifest: {},
  pack: (id, module, manifest, rest) => packWith({}, id, module, manifest, rest),
  canary: () => ({ id: CANARY_ID, module: echoModule() }),
  guests: helixGuests,
  output: { enveloped: true, answer: okEnvelope, at: '/output' },
  caller: {
    pack: (id, allow, manifest = {}) => ({
      id,
      module: rawCallerModule(),
      manifest: { limits: { ...RAW_LIMITS }, capabilities: { abiVersion: 1, allow }, ...manifest },
    }),
    input: (requests) => rawInput(requests.map((request) => ({ request }))),
    answers: rawAnswers,
    perCall: Number.POSITIVE_INFINITY,
    anyBytes: true,
    storm: (id, allow, maxCapabilityCalls) => ({
      pack: {
        id,
        module: '',
        guest: 'script.ts',
        manifest: { limits: { ...SCRIPT_LIMITS, maxCapabilityCalls }, capabilities: { abiVersion: 1, allow } },
      },
      input: (request) => ({ storm: (request as { name: string }).name }),
    }),
  },
  phases: ['start', 'alloc', 'execute', 'dealloc'],
  reportedPhase: (phase: Phase) => phase,
  panicExport: true,
  loadInstantiates: false,
  setsErrors: false,
  fuelKnownHere: true,
  stormCeiling: 20,
  workers: (stats) => stats.workers,
};
