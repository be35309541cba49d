// The extism engine: extism/v1 plugins (`run`, the Extism kernel's imports, helix_capability_call)
// on the engine's Extism kernel. Its output is the value itself (ABI-EXTISM-007), its errors go
// through error_set (ABI-EXTISM-008), and its capability caller is the forwarder, whose input is
// the one request it sends.
import type { ResponseEnvelope } from '../../abi/index.js';
import { CheckFailure } from '../expect.js';
import type { CallerAnswer, EngineAdapter, EngineGuests } from './adapter.js';
import { CANARY_ID, EXTISM_ECHO } from '../kit/canary.js';
import { extismForwarder } from '../kit/caps-kit.js';
import { EXTISM_COUNTER, extismEcho, extismNumber, extismRun, extismWat } from '../kit/extism-wat.js';
import { watString } from '../kit/guest-wat.js';
import { BAD_OFFSET_PLUGIN, bytesExtismModule, CATCHING_SPIN_PLUGIN, stormPlugin, throwingPlugin } from '../kit/io-guests.js';
import { EXTISM_EXECUTION_COUNTER, EXTISM_PLANT } from '../kit/state-guests.js';
import { DEFAULT_LIMITS, packWith } from '../kit/toolpack.js';

/** The manifest fields of an extism/v1 toolpack of the kit. */
const MANIFEST = { abi: 'extism/v1', entrypoint: 'run' } as const;

const memory = (o: { pages?: number; maxPages?: number }): { pages?: number; maxPages?: number } => ({
  ...(o.pages === undefined ? {} : { pages: o.pages }),
  ...(o.maxPages === undefined ? {} : { maxPages: o.maxPages }),
});

/** extism/v1 guests. */
export const extismGuests: EngineGuests = {
  echo: (o = {}) => extismEcho(o.pages),
  bare: (stmts = '', o = {}) => extismWat(`${stmts} (i32.const 0)`, { ...memory(o), ...(o.extra === undefined ? {} : { extra: o.extra }) }),
  running: (stmts, o = {}) => extismRun(stmts, o),
  number: (expr, o = {}) => extismNumber(expr, o),
  answering(value) {
    const n = new TextEncoder().encode(value).length;
    return extismWat(`(call $output_set (call $emit (i32.const 0) (i32.const ${n})) (i64.const ${n})) (i32.const 0)`, {
      data: watString(value),
    });
  },
  oversized: (bytes) => extismWat(`(call $output_set (call $alloc (i64.const ${bytes})) (i64.const ${bytes})) (i32.const 0)`),
  bytes: (mode) => bytesExtismModule(mode),
  memory64: '(module (memory (export "memory") i64 1) (func (export "run") (result i32) (i32.const 0)))',
  sharedMemory: (stmts) => `(module
  (import "extism:host/env" "output_set" (func $output_set (param i64 i64)))
  (memory (export "memory") 1 1 shared)
  (func (export "run") (result i32) ${stmts} (i32.const 0)))`,
  outsideImport: {
    module:
      '(module (import "env" "exfiltrate" (func $x)) (memory (export "memory") 1) (func (export "run") (result i32) (call $x) (i32.const 0)))',
    rule: 'ABI-EXTISM-002',
  },
  stateCounter: { module: EXTISM_COUNTER, fresh: { g: 1, m: 1, v: 1 } },
  executionCounter: EXTISM_EXECUTION_COUNTER,
  storm: (calls, o = {}) => stormPlugin(calls, o.trap === true ? `${o.after ?? ''}unreachable` : (o.after ?? '')),
  badPointer: { module: BAD_OFFSET_PLUGIN, details: { import: 'helix_capability_call' } },
  throwing: (phase) => throwingPlugin(phase === 'start' ? 'start' : 'execute'),
  catchingSpin: CATCHING_SPIN_PLUGIN,
  catchingRecursion: undefined,
  plant: (grow) => (grow ? undefined : EXTISM_PLANT),
  planted: (output) => ({ flags: Number(output.v) }),
};

/** The forwarder's answer: its output, which is the broker's answer. */
function forwarded(r: ResponseEnvelope): CallerAnswer[] {
  if (r.status !== 'success')
    throw new CheckFailure(`the forwarder did not succeed: ${r.status} ${r.error?.code ?? ''}: ${r.error?.message ?? ''}`);
  const text = JSON.stringify(r.output);
  return [{ bytes: Buffer.from(text), text, json: r.output as CallerAnswer['json'], dump: Buffer.alloc(0) }];
}

/** The extism engine. */
export const extismAdapter: EngineAdapter = {
  name: 'extism',
  abi: 'extism/v1',
  entry: 'run',
  manifest: MANIFEST,
  pack: (id, module, manifest, rest) => packWith(MANIFEST, id, module, manifest, rest),
  canary: () => ({ id: CANARY_ID, module: EXTISM_ECHO, manifest: { ...MANIFEST } }),
  guests: extismGuests,
  output: { enveloped: false, answer: (value) => value, at: '' },
  caller: {
    pack: (id, allow, manifest = {}) => ({
      id,
      module: extismForwarder(),
      manifest: { ...MANIFEST, capabilities: { abiVersion: 1, allow }, ...manifest },
    }),
    input(requests) {
      const [request] = requests;
      if (requests.length !== 1 || typeof request !== 'object' || request === null || request instanceof Uint8Array)
        throw new CheckFailure('the extism/v1 forwarder sends one request a call, and it must be a JSON object (its input)');
      return request;
    },
    answers: forwarded,
    perCall: 1,
    anyBytes: false,
    storm: (id, allow, maxCapabilityCalls) => ({
      pack: {
        id,
        module: extismForwarder(1_000_000),
        manifest: { ...MANIFEST, limits: { ...DEFAULT_LIMITS, maxCapabilityCalls }, capabilities: { abiVersion: 1, allow } },
      },
      input: (request) => request,
    }),
  },
  phases: ['start', 'execute'],
  reportedPhase: () => 'execute',
  panicExport: false,
  loadInstantiates: true,
  setsErrors: true,
  fuelKnownHere: false,
  stormCeiling: 10,
  workers: (stats) => stats.extism?.workers ?? [],
};
