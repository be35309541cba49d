// Shared by the wasm tests: builds modules from WAT with wabt (all proposals enabled) and runs
// them with real WebAssembly instances, metered through the fuel export.

import asc from 'assemblyscript/asc';
import { allFeatures, wabtValidate, wat2wasm } from './wat.js';
import { Worker } from 'node:worker_threads';
import { FUEL_EXPORT } from '../../host/2-sandbox/wasm/costs.js';

/** Assembles WAT text into module bytes, every proposal wabt knows enabled. */
export const wat = (text: string): Promise<Uint8Array> => wat2wasm(text);
export { allFeatures, wabtValidate };

/** Instantiates bytes and returns the exports. */
export async function instantiate(bytes: Uint8Array, imports: WebAssembly.Imports = {}): Promise<WebAssembly.Exports> {
  const { instance } = await WebAssembly.instantiate(bytes, imports);
  return instance.exports;
}

/** Budget that no test exhausts unless it means to. */
export const PLENTY = 1n << 40n;

/** A metered call's outcome: the result or the trap, and the fuel it used. */
export interface Metered {
  result?: unknown;
  error?: Error;
  used: bigint;
  remaining: bigint;
}

/** Calls export `name` of an instrumented instance with `budget` fuel. */
export function metered(exports: WebAssembly.Exports, name: string, args: unknown[] = [], budget = PLENTY): Metered {
  const fuel = exports[FUEL_EXPORT] as WebAssembly.Global;
  fuel.value = budget;
  const fn = exports[name] as (...a: unknown[]) => unknown;
  try {
    const result = fn(...args);
    const remaining = fuel.value as bigint;
    return { result, used: budget - remaining, remaining };
  } catch (error) {
    const remaining = fuel.value as bigint;
    return { error: error as Error, used: budget - remaining, remaining };
  }
}

/** Unsigned LEB128 bytes of `n`. */
export function leb(n: number): number[] {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n >>>= 7;
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return out;
}

/** A section: id, size, content. */
export function section(id: number, content: number[]): number[] {
  return [id, ...leb(content.length), ...content];
}

/** A module from hand-written sections, for encodings wabt cannot produce or would refuse. */
export function binary(...sections: number[][]): Uint8Array {
  return new Uint8Array([0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, ...sections.flat()]);
}

/** A code section entry: size-prefixed body with no locals. */
export function body(...code: number[]): number[] {
  const b = [0, ...code];
  return [...leb(b.length), ...b];
}

/** Compiles AssemblyScript source (one text, or texts by path, each an entry) to a module with the stub runtime. */
export async function compileAssemblyScript(source: string | Record<string, string>, optimize = true): Promise<Uint8Array> {
  const result = await asc.compileString(source, { optimizeLevel: optimize ? 3 : 0, shrinkLevel: 0, runtime: 'stub', noAssert: true });
  if (result.error || !result.binary) throw new Error(`asc failed: ${result.stderr.toString()}`);
  return result.binary;
}

/**
 * Runs export `name` of instrumented `bytes` with `budget` fuel on a separate thread, and fails
 * if it has not stopped within `timeoutMs`: a broken fuel check must fail the test, not hang it
 * (a running wasm loop cannot be interrupted from its own thread).
 */
export async function meteredGuarded(
  bytes: Uint8Array,
  name: string,
  args: number[],
  budget: bigint,
  timeoutMs = 20_000,
): Promise<{ trapped: boolean; remaining: bigint }> {
  const code = `
    const { parentPort, workerData } = require('node:worker_threads');
    const instance = new WebAssembly.Instance(new WebAssembly.Module(workerData.bytes), {});
    const fuel = instance.exports[workerData.fuelExport];
    fuel.value = workerData.budget;
    let trapped = false;
    try { instance.exports[workerData.name](...workerData.args); } catch (e) { trapped = e instanceof WebAssembly.RuntimeError; }
    parentPort.postMessage({ trapped, remaining: fuel.value });`;
  const worker = new Worker(code, { eval: true, workerData: { bytes, name, args, budget, fuelExport: FUEL_EXPORT } });
  try {
    return await new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`${name} did not stop within ${timeoutMs} ms: fuel metering let it run unbounded`)),
        timeoutMs,
      );
      worker.once('message', (m: { trapped: boolean; remaining: bigint }) => {
        clearTimeout(timer);
        resolve(m);
      });
      worker.once('error', (e) => {
        clearTimeout(timer);
        reject(e);
      });
    });
  } finally {
    await worker.terminate();
  }
}
