// The MCP stdio transport of `helix serve`: newline-delimited JSON-RPC on stdin and stdout in
// bounded memory both ways. A broken line is answered and the next one served; it never closes.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HelixError } from '../errors.js';
import { checkFrame } from './frame-check.js';
import { FrameReader } from './frame-reader.js';
import { errorResponse, RpcCode, rpcError, type RpcErrorResponse } from './rpc-errors.js';

/** Added to the policy's largest input to bound a message: the request around the input. */
export const MESSAGE_MARGIN_BYTES = 1024 * 1024;
/** Smallest and largest `maxMessageBytes` (the largest stays well below V8's longest string). */
export const MESSAGE_BYTES_RANGE = { min: 1024, max: 256 * 1024 * 1024 } as const;
/** Default bound on output the client has not read yet. */
export const DEFAULT_MAX_BACKLOG_BYTES = 64 * 1024 * 1024;

/** Options of the stdio transport. */
export interface StdioTransportOptions {
  readonly stdin?: Readable;
  readonly stdout?: Writable;
  /** Longest accepted line in bytes, without its LF or CRLF (ABI-MCP-001). */
  readonly maxMessageBytes: number;
  /** Most bytes written but not yet read by the client (ABI-MCP-008); default 64 MiB. */
  readonly maxBacklogBytes?: number;
  /** Where refused frames, dropped notifications and a stalled client are reported; default onerror. */
  readonly log?: (line: string) => void;
}

/** Checks a `maxMessageBytes` value, naming the option in the error. */
export function checkMaxMessageBytes(value: unknown, name = 'options.maxMessageBytes'): number {
  const { min, max } = MESSAGE_BYTES_RANGE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) throw new RangeError(`${name} must be an integer from ${min} to ${max} bytes, got ${String(value)}`);
  return value;
}

/** A message the SDK hands over; only notifications (no id) may be dropped under backlog. */
const isNotification = (m: JSONRPCMessage): boolean => 'method' in m && !('id' in m);

/** The SDK's Transport over a byte stream pair (stdin/stdout by default). */
export class StdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage) => void;

  readonly maxMessageBytes: number;
  readonly maxBacklogBytes: number;
  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #log: (line: string) => void;
  readonly #reader: FrameReader;
  #started = false;
  #closed = false;
  #pausedInput = false;
  #dropped = 0;
  #drainWaiters: Array<() => void> = [];

  constructor(options: StdioTransportOptions) {
    this.maxMessageBytes = checkMaxMessageBytes(options.maxMessageBytes);
    this.maxBacklogBytes = options.maxBacklogBytes ?? DEFAULT_MAX_BACKLOG_BYTES;
    this.#stdin = options.stdin ?? process.stdin;
    this.#stdout = options.stdout ?? process.stdout;
    this.#log = options.log ?? ((line) => this.onerror?.(new Error(line)));
    this.#reader = new FrameReader(this.maxMessageBytes);
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('error', this.#onStreamError);
    this.#stdout.on('error', this.#onStreamError);
    this.#stdout.on('drain', this.#onDrain);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('error', this.#onStreamError);
    this.#stdout.off('drain', this.#onDrain);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
    this.onclose?.();
  }

  /** Sends a message; resolves once the stream has taken it (at once, or on the next drain). */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    return this.#write(this.#serialize(message), isNotification(message));
  }

  /** Bytes written and not yet taken by the client. */
  get backlogBytes(): number {
    return this.#stdout.writableLength;
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const frames = this.#reader.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    for (const frame of frames) {
      if (this.#closed) return;
      const verdict = checkFrame(frame, this.maxMessageBytes);
      if (verdict.kind === 'message') this.#deliver(verdict.message);
      else if (verdict.kind === 'ignore') this.#log(verdict.why);
      else if (verdict.kind === 'reply') {
        this.#log(`answered ${verdict.error.code} (id ${JSON.stringify(verdict.id)}): ${verdict.error.message}`);
        void this.#write(`${JSON.stringify(errorResponse(verdict.id, verdict.error))}\n`, false);
      }
    }
  };

  /** Hands a message to the protocol; whatever it throws is this line's trouble, not the server's. */
  #deliver(message: JSONRPCMessage): void {
    try {
      this.onmessage?.(message);
    } catch (err) {
      this.#log(`a message handler failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  /** The wire text of a message; a response that cannot be serialized becomes an internal error. */
  #serialize(message: JSONRPCMessage): string {
    try {
      return `${JSON.stringify(message)}\n`;
    } catch (err) {
      if (!('id' in message) || 'method' in message) throw err;
      const why = err instanceof Error ? err.message : String(err);
      const error: RpcErrorResponse = errorResponse(message.id ?? null, rpcError(RpcCode.InternalError, 'S-TOOL-OUTPUT-JSON', `Internal error: the result could not be serialized (${why}).`));
      return `${JSON.stringify(error)}\n`;
    }
  }

  #write(text: string, droppable: boolean): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const backlog = this.#stdout.writableLength;
    if (backlog > 0) {
      const size = Buffer.byteLength(text);
      // Past half the bound the client is behind: hold its input and shed what can be lost.
      if (backlog + size > this.maxBacklogBytes / 2) this.#pauseInput();
      if (droppable && backlog + size > this.maxBacklogBytes / 2) {
        if (this.#dropped++ === 0) this.#log(`the client is ${backlog} bytes behind; dropping notifications until it catches up`);
        return Promise.resolve();
      }
      if (backlog + size > this.maxBacklogBytes) {
        this.#stalled(backlog);
        return Promise.resolve();
      }
    }
    if (this.#stdout.write(text)) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  #pauseInput(): void {
    if (this.#pausedInput) return;
    this.#pausedInput = true;
    this.#stdin.pause();
  }

  readonly #onDrain = (): void => {
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
    if (this.#dropped > 0) this.#log(`the client caught up; ${this.#dropped} notification(s) were dropped`);
    this.#dropped = 0;
    if (this.#pausedInput && !this.#closed) {
      this.#pausedInput = false;
      this.#stdin.resume();
    }
  };

  #stalled(backlog: number): void {
    const err = new HelixError('R-CAP-MCP-OUTPUT-BACKLOG', {
      message: `The client has left ${backlog} bytes of output unread, and the next response would pass the ${this.maxBacklogBytes}-byte bound; closing the connection.`,
      details: { backlog_bytes: backlog, max_backlog_bytes: this.maxBacklogBytes },
    });
    this.#log(`${err.code}: ${err.message} Hint: ${err.hint}`);
    void this.close();
  }

  readonly #onStreamError = (err: Error): void => {
    this.onerror?.(err);
    // A broken pipe either way is the end of this connection.
    void this.close();
  };
}
