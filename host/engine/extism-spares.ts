// Extism plugins made ahead of need (spares, ABI-EXTISM-006). Making a plugin (a worker and an
// instance) is most of an Extism call's cost, so when a call ends the runner orders a spare for
// the same variant: the next call finds its plugin ready. A spare still serves exactly one call and
// is then closed (ABI-CALL-001); nothing of the plugin runs before its call, so it is as fresh as a
// plugin made on the spot. Spares are per variant, at most `max` in all, and closed after
// `idleMs` unused, when their variant is given up (ABI-ALLOC-011) or on close().
import type { CallContext, Plugin } from '@extism/extism';
import { describe } from './extism-outcome.js';
import { REPORT_EXPORT } from './extism-shim.js';

/** An extism/v1 plugin compiled for one digest, memory cap and fuel budget, with its metering shim. */
export interface PluginVariant {
  /** digest, memory cap and fuel: everything a plugin is made for. */
  readonly key: string;
  readonly plugin: WebAssembly.Module;
  readonly shim: WebAssembly.Module;
}

/** The host function of the call a plugin serves. */
export type CapabilityHandler = (ctx: CallContext, offset: bigint) => Promise<bigint>;

/** Where a plugin finds its call's host function; a spare's is filled when a call takes it. */
export interface Slot {
  handler?: CapabilityHandler;
}

/** Makes a plugin of a variant, whose host function is whatever call `slot` holds when it runs. */
export type MakePlugin = (variant: PluginVariant, maxMemoryPages: number, slot: Slot) => Promise<Plugin>;

/** A plugin made ahead of need for one variant. */
export interface Spare {
  readonly key: string;
  readonly slot: Slot;
  /** The plugin, or why it could not be made; never rejects. */
  readonly ready: Promise<Plugin | Error>;
  /** listed: waiting in the pool; taken: a call has it; dropped: evicted, idle or closed. */
  status: 'listed' | 'taken' | 'dropped';
  idle?: NodeJS.Timeout;
}

/** The spares of one runner, and every plugin it is closing. */
export class SparePool {
  readonly #spares = new Map<string, Spare[]>();
  readonly #making = new Set<Promise<unknown>>();
  readonly #closing = new Set<Promise<unknown>>();
  #count = 0;
  #closed = false;

  constructor(
    readonly make: MakePlugin,
    readonly max: number,
    readonly idleMs: number,
  ) {}

  /** Spares held now. */
  get count(): number {
    return this.#count;
  }

  /** The variant of each spare held now. */
  keys(): string[] {
    return [...this.#spares.values()].flatMap((list) => list.map((spare) => spare.key));
  }

  /** Closes a plugin in the background; close() waits for every one. */
  retire(plugin: Plugin): void {
    this.#track(this.#closing, plugin.close().catch(() => undefined));
  }

  /** Starts making a spare of `variant`; when the pool is full a spare of another variant gives way. */
  warmUp(variant: PluginVariant, maxMemoryPages: number): void {
    if (this.#closed) return;
    if (this.#count >= this.max) {
      const other = [...this.#spares.entries()].find(([key]) => key !== variant.key)?.[1][0];
      if (other === undefined) return;
      this.#drop(other);
    }
    const slot: Slot = {};
    // Listed now, so a call coming at once takes it and waits for it rather than making another;
    // made on the next turn of the event loop, once the call that ordered it has its result.
    const ready = new Promise<void>((resolve) => setImmediate(resolve))
      .then<Plugin | Error>(async () => {
        if (spare.status === 'dropped') return new Error('The spare was dropped before it was made.');
        const plugin = await this.make(variant, maxMemoryPages, slot);
        // One call of the shim's report, which runs none of the plugin's code and changes none
        // of its state (it reads the fuel counter and memory size; Extism resets its own blocks
        // at each call): the worker's call path is then warm for the real call.
        try {
          await plugin.call(REPORT_EXPORT);
        } catch (err) {
          this.retire(plugin);
          throw err;
        }
        return plugin;
      })
      .catch((err: unknown) => new Error(describe(err).message));
    const spare: Spare = { key: variant.key, slot, ready, status: 'listed' };
    const list = this.#spares.get(variant.key) ?? [];
    list.push(spare);
    this.#spares.set(variant.key, list);
    this.#count += 1;
    this.#track(
      this.#making,
      ready.then((p) => {
        // A spare that failed is dropped; the call that takes the next one makes its own plugin.
        if (p instanceof Error) this.#drop(spare);
        else if (spare.status === 'listed') spare.idle = setTimeout(() => this.#drop(spare), this.idleMs).unref();
      }),
    );
  }

  /** The oldest spare of `key`, ready or still being made, taken out of the pool. */
  take(key: string): Spare | undefined {
    const list = this.#spares.get(key);
    const spare = list?.shift();
    if (spare === undefined) return undefined;
    if (list!.length === 0) this.#spares.delete(key);
    this.#count -= 1;
    spare.status = 'taken';
    clearTimeout(spare.idle);
    return spare;
  }

  /** Drops every spare of `key` (its variant was given up). */
  dropVariant(key: string): void {
    for (const spare of [...(this.#spares.get(key) ?? [])]) this.#drop(spare);
  }

  /** Settles when every spare being made is ready or failed. */
  async settled(): Promise<void> {
    while (this.#making.size > 0) await Promise.allSettled([...this.#making]);
  }

  /** Drops every spare and makes no more; settles when every plugin is closed. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const list of [...this.#spares.values()]) for (const spare of [...list]) this.#drop(spare);
    await this.settled();
    while (this.#closing.size > 0) await Promise.all([...this.#closing]);
  }

  /** Removes a listed spare from the pool; its plugin is closed once it exists. */
  #drop(spare: Spare): void {
    if (spare.status !== 'listed') return;
    spare.status = 'dropped';
    clearTimeout(spare.idle);
    const list = this.#spares.get(spare.key)!;
    list.splice(list.indexOf(spare), 1);
    if (list.length === 0) this.#spares.delete(spare.key);
    this.#count -= 1;
    this.#track(
      this.#closing,
      spare.ready.then((p) => {
        if (!(p instanceof Error)) this.retire(p);
      }),
    );
  }

  #track(set: Set<Promise<unknown>>, promise: Promise<unknown>): void {
    set.add(promise);
    void promise.then(() => set.delete(promise));
  }
}
