// The sandbox worker: piscina starts it with one long-running task, `serve`, which is a small
// reactor: wait on the lane's control word, take the task from the port, run it in the
// Sandbox, post the reply, wake the main thread. A guest's capability call is forwarded the
// same way and the worker blocks until the broker's answer arrives. Modules are kept per key
// until the engine gives the key up (ABI-ALLOC-010).
import { performance } from 'node:perf_hooks';
import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import {
  LANE_ANSWER_WORD,
  LANE_ANSWERED,
  LANE_CAPABILITY,
  LANE_CONTROL_WORD,
  LANE_REPLY,
  LANE_REQUEST,
  LANE_SHUTDOWN,
  LANE_STATUS_WORD,
  LANE_UP,
  LANE_UP_WORD,
  type BrokerAnswer,
  type BulkPart,
  type BulkWire,
  type CapabilityForward,
  type EvictMessage,
  type ExecuteTask,
  type LaneReply,
  type LaneAnswer,
  type LaneStart,
  type LaneTask,
} from './protocol.js';
import { Sandbox } from './sandbox.js';
import { ExtismSandbox } from './extism-sandbox.js';

/** piscina's entry point: serves the lane until told to shut down. */
export default function serve({ control, port, bulk: area }: LaneStart): string {
  const words = new Int32Array(control);
  const bulk = new Uint8Array(area);
  const sandbox = new Sandbox((request, part) => forward(words, port, bulk, request, part));
  const modules = new Map<string, WebAssembly.Module>();
  // Extism plugins run on the same lane, in a sandbox of their own (extism-sandbox.ts).
  const extism = new ExtismSandbox((request) => forward(words, port, bulk, request));
  const execute = (task: ExecuteTask): LaneReply => {
    if (task.module !== undefined) modules.set(task.key, task.module);
    const module = modules.get(task.key);
    return module === undefined
      ? { kind: 'host-error', message: `worker has no module for ${task.key}` }
      : (task.abi === 'extism/v1' ? extism : sandbox).run({ ...task, module });
  };
  // The thread is up: from now on a call's deadline runs (ABI-DEADLINE-001).
  Atomics.store(words, LANE_UP_WORD, LANE_UP);
  Atomics.notify(words, LANE_UP_WORD);
  for (;;) {
    awaitRequest(words);
    const signal = Atomics.exchange(words, LANE_CONTROL_WORD, 0);
    if (signal === LANE_SHUTDOWN) return 'shutdown';
    // A wake without the request flag is stale; the flag is raised only after a message is posted.
    if (signal !== LANE_REQUEST) continue;
    // One wake may find evictions and then a task (the flag is raised once per message, but
    // read once): take messages until a task has been answered or none is left.
    for (let received = receiveMessageOnPort(port); received !== undefined; received = receiveMessageOnPort(port)) {
      const message = received.message as LaneTask | EvictMessage;
      if (message.kind === 'evict') {
        for (const key of message.keys) {
          modules.delete(key);
          sandbox.forget(key);
          extism.forget(key);
        }
        continue;
      }
      let reply: LaneReply;
      try {
        reply =
          message.kind === 'census'
            ? { kind: 'census', modules: [...modules.keys()], instances: [...sandbox.kept(), ...extism.kept()] }
            : execute(message);
      } catch (err) {
        reply = { kind: 'host-error', message: err instanceof Error ? (err.stack ?? err.message) : String(err) };
      }
      port.postMessage(reply);
      Atomics.store(words, LANE_STATUS_WORD, LANE_REPLY);
      Atomics.notify(words, LANE_STATUS_WORD);
      break;
    }
  }
}

/**
 * Hands a capability request to the main thread's broker and blocks until it answers: the
 * guest's call is synchronous, the broker's work (store, network) is not. The deadline still
 * runs on the main thread, which terminates this worker if the answer comes too late.
 */
function forward(words: Int32Array, port: MessagePort, area: Uint8Array, request: Uint8Array, bulk?: BulkPart): BrokerAnswer {
  let wire: BulkWire | undefined;
  if (bulk?.kind === 'write') {
    // The guest's bytes go through the lane's bulk area, not the port (LaneStart.bulk).
    area.set(bulk.data);
    wire = { kind: 'write', length: bulk.data.length };
  } else wire = bulk;
  const message: CapabilityForward = wire === undefined ? { kind: 'capability', request } : { kind: 'capability', request, bulk: wire };
  Atomics.store(words, LANE_ANSWER_WORD, 0);
  port.postMessage(message);
  Atomics.store(words, LANE_STATUS_WORD, LANE_CAPABILITY);
  Atomics.notify(words, LANE_STATUS_WORD);
  for (;;) {
    Atomics.wait(words, LANE_ANSWER_WORD, 0);
    if (Atomics.exchange(words, LANE_ANSWER_WORD, 0) !== LANE_ANSWERED) continue;
    const received = receiveMessageOnPort(port);
    if (received === undefined) continue;
    const answer = received.message as LaneAnswer;
    // A view of the bulk area: the sandbox copies it into guest memory before anything else uses the area.
    if (answer.kind !== 'answer' || answer.bulkLength === undefined) return answer;
    const { bulkLength, ...rest } = answer;
    return { ...rest, bulk: area.subarray(0, bulkLength) };
  }
}

/** How long a worker polls for the next task before it sleeps, in ms. */
const SPIN_MS = 0.2;

/**
 * Waits for the request flag: polls briefly first, because waking a thread that has gone to
 * sleep costs tens of microseconds on an idle machine, more than a small call itself; back-to-
 * back calls then never pay it. Then sleeps in Atomics.wait.
 */
function awaitRequest(words: Int32Array): void {
  const until = performance.now() + SPIN_MS;
  while (Atomics.load(words, LANE_CONTROL_WORD) === 0) {
    if (performance.now() > until) {
      Atomics.wait(words, LANE_CONTROL_WORD, 0);
      return;
    }
  }
}
