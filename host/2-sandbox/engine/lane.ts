// The main thread's end of one worker: a lane. piscina runs the worker's long-lived `serve`
// task; the lane posts tasks on a MessagePort, wakes the worker through a shared control word,
// and waits for the reply with Atomics.waitAsync, so a call costs one promise wake here.
import { performance } from 'node:perf_hooks';
import { MessageChannel, receiveMessageOnPort, type MessagePort } from 'node:worker_threads';
import type { Piscina } from 'piscina';
import { BULK_MAX_PIECE, MAX_MODULE_VARIANT_BYTES, MAX_MODULE_VARIANTS } from '../../../abi/index.js';
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
  LANE_WORDS,
  type BrokerAnswer,
  type CapabilityBroker,
  type CapabilityForward,
  type EvictMessage,
  type ExecuteTask,
  type LaneReply,
  type LaneStart,
  type LaneAnswer,
  type LaneTask,
  type WorkerCensus,
} from './protocol.js';

/** How a task sent on a lane ended. */
export type LaneOutcome = { readonly kind: 'reply'; readonly reply: LaneReply } | { readonly kind: 'lost'; readonly message: string };

/** One worker thread serving one task at a time. */
export class Lane {
  readonly #words: Int32Array;
  readonly #port: MessagePort;
  /** The lane's bulk area (LaneStart.bulk); untouched, its pages cost nothing until a bulk call. */
  readonly #bulk: Uint8Array;
  readonly #abort = new AbortController();
  /** Module keys this worker already holds, so each module crosses once per worker. */
  readonly #known = new Set<string>();
  /** Keys the engine gave up that the worker has not been told of yet. */
  #forgotten: string[] = [];
  /** Variants the worker has been told to drop, and their instrumented bytes. */
  #dropped = 0;
  #droppedBytes = 0;
  #closing = false;
  #pending: ((outcome: LaneOutcome) => void) | undefined;
  #broker: CapabilityBroker | undefined;
  #dead = false;
  /** Settles when the worker has stopped, for whatever reason. */
  readonly ended: Promise<void>;
  /** Settles when the worker's thread has started and serves the lane, or has stopped first. */
  readonly up: Promise<void>;
  #isUp = false;

  constructor(pool: Piscina<LaneStart, string>, onEnd: (lane: Lane) => void) {
    const control = new SharedArrayBuffer(LANE_WORDS * Int32Array.BYTES_PER_ELEMENT);
    const { port1, port2 } = new MessageChannel();
    this.#words = new Int32Array(control);
    this.#port = port1;
    const bulk = new SharedArrayBuffer(BULK_MAX_PIECE);
    this.#bulk = new Uint8Array(bulk);
    this.ended = pool.run({ control, port: port2, bulk }, { transferList: [port2] as never, signal: this.#abort.signal }).then(
      () => this.#end('the worker stopped'),
      (err: unknown) => this.#end(err instanceof Error ? err.message : String(err)),
    );
    void this.ended.then(() => onEnd(this));
    const started = Atomics.waitAsync(this.#words, LANE_UP_WORD, 0);
    this.up = Promise.race([started.async ? started.value : Promise.resolve(), this.ended]).then(() => {
      this.#isUp = true;
    });
  }

  /** Whether the worker's thread has started (or stopped): `up` has settled. */
  get isUp(): boolean {
    return this.#isUp || Atomics.load(this.#words, LANE_UP_WORD) === LANE_UP;
  }

  /** Whether the worker is gone (killed, crashed or shut down). */
  get dead(): boolean {
    return this.#dead;
  }

  /**
   * Sends `task`; settles with the worker's reply, or `lost` if the worker dies first. With
   * `spinMs` > 0 the main thread polls for the reply that long before yielding to the event
   * loop: a short call then returns without the cost of waking an idle event loop.
   */
  run(task: ExecuteTask, module: WebAssembly.Module, broker: CapabilityBroker, spinMs = 0): Promise<LaneOutcome> {
    // A task posted after shutdown() would overwrite its signal, and the worker would never stop.
    if (this.#dead || this.#closing) return Promise.resolve({ kind: 'lost', message: 'the worker had stopped' });
    const message: ExecuteTask = this.#known.has(task.key) ? task : { ...task, module };
    this.#known.add(task.key);
    return this.#send(message, broker, spinMs);
  }

  /** What the worker holds; undefined when it is busy or gone (for tests and diagnostics). */
  async census(): Promise<WorkerCensus | undefined> {
    if (this.#dead || this.#closing || this.#pending !== undefined) return undefined;
    const outcome = await this.#send({ kind: 'census' }, undefined, 0);
    return outcome.kind === 'reply' && outcome.reply.kind === 'census' ? outcome.reply : undefined;
  }

  #send(message: LaneTask, broker: CapabilityBroker | undefined, spinMs: number): Promise<LaneOutcome> {
    return new Promise((resolve) => {
      this.#pending = resolve;
      this.#broker = broker;
      // Order matters: the reply flag is cleared before the task exists, and the request flag
      // is raised only once the task is on the port, so a flag seen set means a message waits.
      Atomics.store(this.#words, LANE_STATUS_WORD, 0);
      this.#port.postMessage(message);
      Atomics.store(this.#words, LANE_CONTROL_WORD, LANE_REQUEST);
      Atomics.notify(this.#words, LANE_CONTROL_WORD);
      if (spinMs > 0) {
        const until = performance.now() + spinMs;
        while (Atomics.load(this.#words, LANE_STATUS_WORD) === 0 && performance.now() < until);
      }
      this.#awaitReply();
    });
  }

  /**
   * The engine gave `key` (of `bytes` instrumented bytes) up: the worker drops its module and
   * kept instance at once when idle, else as soon as its call ends, before it takes another
   * (ABI-ALLOC-010).
   */
  forget(key: string, bytes: number): void {
    if (!this.#known.delete(key)) return;
    this.#forgotten.push(key);
    this.#dropped += 1;
    this.#droppedBytes += bytes;
    if (this.#pending === undefined) this.#flush();
  }

  /**
   * Whether the worker has dropped as many variants, or as many bytes of them, as the engine
   * keeps: V8 frees a dropped module's code only once every thread that held it has collected
   * its garbage, which a worker that allocates little may not do for a long time, so such a worker
   * is replaced when idle and its heap goes with it (ABI-ALLOC-010).
   */
  get stale(): boolean {
    return this.#dropped >= MAX_MODULE_VARIANTS || this.#droppedBytes >= MAX_MODULE_VARIANT_BYTES;
  }

  /** Terminates the worker now (a deadline passed); a pending call settles as `lost`. */
  kill(): void {
    if (this.#dead) return;
    this.#dead = true;
    this.#settle({ kind: 'lost', message: 'the worker was stopped' });
    // Release our own waiter so no promise is left parked on the control word.
    Atomics.store(this.#words, LANE_STATUS_WORD, LANE_REPLY);
    Atomics.notify(this.#words, LANE_STATUS_WORD);
    Atomics.store(this.#words, LANE_UP_WORD, LANE_UP);
    Atomics.notify(this.#words, LANE_UP_WORD);
    this.#abort.abort();
  }

  /** Asks the worker to finish its loop and waits until it has. */
  async shutdown(): Promise<void> {
    this.#closing = true;
    if (!this.#dead) {
      Atomics.store(this.#words, LANE_CONTROL_WORD, LANE_SHUTDOWN);
      Atomics.notify(this.#words, LANE_CONTROL_WORD);
    }
    await this.ended;
  }

  #awaitReply(): void {
    const waited = Atomics.waitAsync(this.#words, LANE_STATUS_WORD, 0);
    if (waited.async) void waited.value.then(() => this.#collect());
    else this.#collect();
  }

  #collect(): void {
    if (this.#dead) return;
    // A wake can be stale: the worker's notify for the previous reply may land after this call
    // began waiting. Only the flag says what is on the port.
    const flag = Atomics.load(this.#words, LANE_STATUS_WORD);
    if (flag === LANE_CAPABILITY) {
      void this.#answer();
      return;
    }
    if (flag !== LANE_REPLY) {
      this.#awaitReply();
      return;
    }
    const received = receiveMessageOnPort(this.#port);
    this.#settle(
      received === undefined
        ? { kind: 'lost', message: 'the worker woke without a reply' }
        : { kind: 'reply', reply: received.message as LaneReply },
    );
  }

  /** Serves a guest's capability call: ask the broker, post its answer, wake the worker. */
  async #answer(): Promise<void> {
    const received = receiveMessageOnPort(this.#port);
    const broker = this.#broker;
    if (received === undefined || broker === undefined) {
      this.#settle({ kind: 'lost', message: 'the worker asked for a capability without a request' });
      this.kill();
      return;
    }
    let answer: BrokerAnswer;
    try {
      const forwarded = received.message as CapabilityForward;
      const wire = forwarded.bulk;
      // A write's bytes are taken out of the bulk area at once: the broker keeps them, and the area serves the next call.
      answer =
        wire === undefined
          ? await broker(forwarded.request)
          : await broker(forwarded.request, wire.kind === 'read' ? wire : { kind: 'write', data: this.#bulk.slice(0, wire.length) });
    } catch (err) {
      answer = {
        kind: 'abort',
        code: 'S-TOOL-WORKER-LOST',
        message: `The capability broker failed: ${err instanceof Error ? err.message : String(err)}`,
        details: {},
      };
    }
    if (this.#dead) return; // the deadline passed while the broker worked
    Atomics.store(this.#words, LANE_STATUS_WORD, 0);
    this.#port.postMessage(this.#wire(answer));
    Atomics.store(this.#words, LANE_ANSWER_WORD, LANE_ANSWERED);
    Atomics.notify(this.#words, LANE_ANSWER_WORD);
    this.#awaitReply();
  }

  /** The answer as it crosses: a bulk read's bytes copied into the bulk area, their length on the port. */
  #wire(answer: BrokerAnswer): LaneAnswer {
    if (answer.kind !== 'answer' || answer.bulk === undefined) return answer;
    const { bulk, ...rest } = answer;
    this.#bulk.set(bulk);
    return { ...rest, bulkLength: bulk.length };
  }

  #settle(outcome: LaneOutcome): void {
    const pending = this.#pending;
    this.#pending = undefined;
    this.#broker = undefined;
    // Ahead of whatever the engine sends next, which it does only once `pending` has resolved.
    this.#flush();
    pending?.(outcome);
  }

  /** Posts the keys forgotten while the worker was busy; the worker reads them on its next wake. */
  #flush(): void {
    if (this.#dead || this.#closing || this.#forgotten.length === 0) return;
    const message: EvictMessage = { kind: 'evict', keys: this.#forgotten };
    this.#forgotten = [];
    this.#port.postMessage(message);
    Atomics.store(this.#words, LANE_CONTROL_WORD, LANE_REQUEST);
    Atomics.notify(this.#words, LANE_CONTROL_WORD);
  }

  #end(message: string): void {
    this.#dead = true;
    this.#settle({ kind: 'lost', message });
    this.#port.close();
  }
}
