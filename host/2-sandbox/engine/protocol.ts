// The protocol between the engine (main thread) and its sandbox workers. Each worker serves
// one lane: messages travel on a MessagePort but are received synchronously
// (receiveMessageOnPort), and a shared Int32Array of control words wakes each side with
// Atomics, so a call costs no event-loop turn in the worker and one promise wake on the main
// thread. Both sides import these types; messages are not re-parsed with zod because both ends
// are host code: the guest's bytes are parsed where they enter, in the worker.
import type { MessagePort } from 'node:worker_threads';
import type { ErrorCode, GuestOutput } from '../../../abi/index.js';

/** Run one call of a compiled module in a fresh (or provably equivalent recycled) instance. */
export interface ExecuteTask {
  readonly kind: 'execute';
  /** Set for an Extism plugin, which runs in the worker's Extism sandbox (extism-sandbox.ts). */
  readonly abi?: 'extism/v1';
  /** Cache key of the compiled module: digest and memory cap. */
  readonly key: string;
  /** Sent only the first time a worker sees `key`; the worker keeps it. */
  readonly module?: WebAssembly.Module;
  /** Whether restoring memory and globals from a post-start snapshot equals a fresh instance. */
  readonly recyclable: boolean;
  readonly hasStart: boolean;
  /** Exported mutable globals to snapshot and restore (instrumentation adds them). */
  readonly globalExports: readonly string[];
  readonly entrypoint: string;
  /** The input, UTF-8 JSON. */
  readonly input: Uint8Array;
  readonly fuel: number;
  readonly maxOutputBytes: number;
  readonly maxMemoryPages: number;
}

/** Ask the worker what it holds (ABI-ALLOC-010): answered with a WorkerCensus. */
export interface CensusTask {
  readonly kind: 'census';
}

/** Everything the main thread sends a worker that the worker answers. */
export type LaneTask = ExecuteTask | CensusTask;

/**
 * The engine gave these variants up: drop their modules and any instance kept of them
 * (ABI-ALLOC-010). Not answered. Sent only while no task runs on the lane: on its own to an idle
 * worker, or just before the next task.
 */
export interface EvictMessage {
  readonly kind: 'evict';
  readonly keys: readonly string[];
}

/** What a worker holds, for tests and diagnostics. */
export interface WorkerCensus {
  readonly kind: 'census';
  /** Keys (digest:cap) of the compiled modules it keeps. */
  readonly modules: readonly string[];
  /** Keys of the instances it keeps for recycling (ABI-ALLOC-008). */
  readonly instances: readonly string[];
}

/** A task with its module resolved, as the sandbox runs it. */
export type RunnableTask = ExecuteTask & { readonly module: WebAssembly.Module };

/** Measurements every result carries. */
export interface ExecuteMeasures {
  readonly fuelUsed: number;
  readonly memoryPages: number;
  /** Whether the call ran on a recycled instance (for benchmarks and tests). */
  readonly recycled: boolean;
}

/** The guest returned a valid output envelope. */
export interface ExecuteOutput extends ExecuteMeasures {
  readonly kind: 'output';
  readonly output: GuestOutput;
  /** sha256 (hex) of the output envelope's bytes, as the guest returned them (for verify). */
  readonly outputSha256: string;
}

/** The guest faulted; the fault is already classified with a taxonomy code. */
export interface ExecuteFault extends ExecuteMeasures {
  readonly kind: 'fault';
  readonly code: ErrorCode;
  readonly message: string;
  readonly details: Record<string, unknown>;
}

/** What a worker answers for an ExecuteTask. */
export type ExecuteResult = ExecuteOutput | ExecuteFault;

/** A host-side failure while serving a task (a bug, not guest behaviour). */
export interface ExecuteHostError {
  readonly kind: 'host-error';
  readonly message: string;
}

/** Everything a worker posts back for a task. */
export type LaneReply = ExecuteResult | ExecuteHostError | WorkerCensus;

/**
 * What a call through `capability_call_bulk` moves outside its envelope (ABI-BULK-001): a read
 * names the room in the guest's buffer, a write carries the bytes the guest's buffer held.
 */
export type BulkPart = { readonly kind: 'read'; readonly capacity: number } | { readonly kind: 'write'; readonly data: Uint8Array };

/**
 * A BulkPart as it crosses the lane: a write's bytes wait in the lane's bulk area (LaneStart.bulk),
 * only their length travels on the port.
 */
export type BulkWire = { readonly kind: 'read'; readonly capacity: number } | { readonly kind: 'write'; readonly length: number };

/** A guest's capability call, forwarded by the worker while the guest waits. */
export interface CapabilityForward {
  readonly kind: 'capability';
  /** The request bytes as the guest wrote them (bounds already checked). */
  readonly request: Uint8Array;
  /** Present for a call through the bulk import. */
  readonly bulk?: BulkWire;
}

/** The broker's answer to a forwarded call. */
export type BrokerAnswer =
  /**
   * Bytes for the guest's answer buffer, and fuel to charge for the call; for a bulk read, the
   * bytes to copy into the guest's buffer (at most its capacity).
   */
  | { readonly kind: 'answer'; readonly response: Uint8Array; readonly fuel: number; readonly bulk?: Uint8Array }
  /** End the run with this fault (e.g. too many calls). */
  | { readonly kind: 'abort'; readonly code: ErrorCode; readonly message: string; readonly details: Record<string, unknown> };

/** Answers a guest's capability request: the broker of the call a worker runs. */
export type CapabilityBroker = (request: Uint8Array, bulk?: BulkPart) => Promise<BrokerAnswer>;

/** A BrokerAnswer as it crosses the lane: a bulk read's bytes wait in the lane's bulk area, only their length travels. */
export type LaneAnswer =
  | Exclude<BrokerAnswer, { kind: 'answer' }>
  | { readonly kind: 'answer'; readonly response: Uint8Array; readonly fuel: number; readonly bulkLength?: number };

/** What the piscina task that starts a lane carries. */
export interface LaneStart {
  /** The lane's shared words, see LANE_*_WORD. */
  readonly control: SharedArrayBuffer;
  /** The worker's end of the lane's MessageChannel. */
  readonly port: MessagePort;
  /**
   * The lane's bulk area, BULK_MAX_PIECE bytes: a bulk read's bytes are copied in by the main
   * thread and out into guest memory by the worker, a write's the other way; only one side
   * touches it at a time, as only one side runs while a capability call is in flight.
   */
  readonly bulk: SharedArrayBuffer;
}

// The lane's four shared words: an index names a word (…_WORD), every other constant is a value
// one word takes, and each value belongs to exactly one word.

/** The main thread's word: 0 idle, LANE_REQUEST when a message waits on the port, LANE_SHUTDOWN to stop. */
export const LANE_CONTROL_WORD = 0;
export const LANE_REQUEST = 1;
export const LANE_SHUTDOWN = 2;
/** The worker's word: 0 nothing yet, LANE_REPLY when its reply is on the port, LANE_CAPABILITY when a capability call is. */
export const LANE_STATUS_WORD = 1;
export const LANE_REPLY = 1;
export const LANE_CAPABILITY = 2;
/** The main thread's answer word: LANE_ANSWERED when the broker's answer is on the port. */
export const LANE_ANSWER_WORD = 2;
export const LANE_ANSWERED = 1;
/** The worker's start word: LANE_UP once its thread has started and serves the lane. */
export const LANE_UP_WORD = 3;
export const LANE_UP = 1;
/** How many shared words a lane has. */
export const LANE_WORDS = 4;
