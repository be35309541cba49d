// The MCP stdio transport of `helix serve`: newline-delimited JSON-RPC on stdin and stdout in
// bounded memory both ways. A broken line is answered and the next one served; a slow reader is
// held back, never dropped. It closes when stdin ends, a stream fails or the server closes it.
import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { HelixError } from '../../../abi/index.js';
import { checkFrame } from './frame-check.js';
import { FrameReader } from './frame-reader.js';
import { DEFAULT_MAX_IN_FLIGHT, RequestWindow } from './request-window.js';
import { errorResponse, RpcCode, rpcError, type RpcErrorResponse } from './rpc-errors.js';

/** Added to the policy's largest input to bound a message: the request around the input. */
export const MESSAGE_MARGIN_BYTES = 1024 * 1024;
/** Smallest and largest `maxMessageBytes` (the largest stays well below V8's longest string). */
export const MESSAGE_BYTES_RANGE = { min: 1024, max: 256 * 1024 * 1024 } as const;
/** Default bound on output the client has not read yet, past which it counts as behind. */
export const DEFAULT_MAX_BACKLOG_BYTES = 32 * 1024 * 1024;

/** Options of the stdio transport. */
export interface StdioTransportOptions {
  readonly stdin?: Readable;
  readonly stdout?: Writable;
  /** Longest accepted line in bytes, without its LF or CRLF (ABI-MCP-001). */
  readonly maxMessageBytes: number;
  /** Unread output past which the client is behind (ABI-MCP-008); default 32 MiB. */
  readonly maxBacklogBytes?: number;
  /** Requests handled at once (ABI-MCP-009); default 64. */
  readonly maxInFlight?: number;
  /** Where refused frames and a client falling behind are reported; default onerror. */
  readonly log?: (line: string) => void;
}

/** Checks a `maxMessageBytes` value, naming the option in the error. */
export function checkMaxMessageBytes(value: unknown, name = 'options.maxMessageBytes'): number {
  const { min, max } = MESSAGE_BYTES_RANGE;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw new RangeError(`${name} must be an integer from ${min} to ${max} bytes, got ${String(value)}`);
  return value;
}

/** A message the SDK hands over; only notifications (no id) may be dropped under backlog. */
const isNotification = (m: JSONRPCMessage): boolean => 'method' in m && !('id' in m);
/** The id of a response or error response (what frees a place in the window). */
const answeredId = (m: JSONRPCMessage): string | number | undefined => ('method' in m || !('id' in m) ? undefined : m.id);

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
  readonly #window: RequestWindow;
  #started = false;
  #closed = false;
  #pausedInput = false;
  #pumping = false;
  /** While the client is behind: notifications dropped, and the most output it left unread. */
  #episode: { dropped: number; largestBacklog: number } | undefined;
  #drainWaiters: Array<() => void> = [];

  constructor(options: StdioTransportOptions) {
    this.maxMessageBytes = checkMaxMessageBytes(options.maxMessageBytes);
    this.maxBacklogBytes = options.maxBacklogBytes ?? DEFAULT_MAX_BACKLOG_BYTES;
    this.#stdin = options.stdin ?? process.stdin;
    this.#stdout = options.stdout ?? process.stdout;
    this.#log = options.log ?? ((line) => this.onerror?.(new Error(line)));
    this.#reader = new FrameReader(this.maxMessageBytes);
    this.#window = new RequestWindow(options.maxInFlight ?? DEFAULT_MAX_IN_FLIGHT, (m) => this.#deliver(m));
  }

  async start(): Promise<void> {
    if (this.#started) throw new Error('StdioTransport already started');
    this.#started = true;
    this.#stdin.on('data', this.#onData);
    this.#stdin.on('end', this.#onEnd);
    this.#stdin.on('error', this.#onStreamError);
    // Kept after close: an EPIPE arriving later must still have a listener.
    this.#stdout.on('error', this.#onStreamError);
    this.#stdout.on('drain', this.#onDrain);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#stdin.off('data', this.#onData);
    this.#stdin.off('end', this.#onEnd);
    this.#stdin.off('error', this.#onStreamError);
    this.#stdout.off('drain', this.#onDrain);
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
    this.#window.clear();
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
    this.onclose?.();
  }

  /** Sends a message; resolves once the stream has taken it (at once, or on the next drain). */
  send(message: JSONRPCMessage): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const sent = this.#write(this.#serialize(message), isNotification(message));
    const id = answeredId(message);
    if (id !== undefined) {
      this.#window.answered(id);
      this.#pump();
    }
    return sent;
  }

  /** Bytes written and not yet taken by the client. */
  get backlogBytes(): number {
    return this.#stdout.writableLength;
  }

  /** Requests handed to the server and not yet answered. */
  get inFlight(): number {
    return this.#window.inFlight;
  }

  /** Whether the client has more output unread than the bound: it gets no new work until it reads. */
  get #behind(): boolean {
    return this.#stdout.writableLength > this.maxBacklogBytes;
  }

  readonly #onData = (chunk: Buffer | string): void => {
    const frames = this.#reader.push(typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk);
    for (const frame of frames) {
      if (this.#closed) return;
      const verdict = checkFrame(frame, this.maxMessageBytes);
      if (verdict.kind === 'message') {
        const behind = this.#behind;
        if (behind && 'id' in verdict.message && 'method' in verdict.message) this.#noteBehind();
        this.#window.offer(verdict.message, frame.kind === 'frame' ? frame.bytes.length : 0, !behind);
      } else if (verdict.kind === 'ignore') this.#log(verdict.why);
      else if (verdict.kind === 'reply') {
        this.#log(`answered ${verdict.error.code} (id ${JSON.stringify(verdict.id)}): ${verdict.error.message}`);
        void this.#write(`${JSON.stringify(errorResponse(verdict.id, verdict.error))}\n`, false);
      }
    }
    // A cancellation may have freed a place. Requests that must wait are held in memory up to one
    // message's worth; past that, stdin waits.
    this.#pump();
    if (this.#window.waitingBytes > this.maxMessageBytes) this.#pauseInput();
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
      const error: RpcErrorResponse = errorResponse(
        message.id ?? null,
        rpcError(RpcCode.InternalError, 'S-TOOL-OUTPUT-JSON', `Internal error: the result could not be serialized (${why}).`),
      );
      return `${JSON.stringify(error)}\n`;
    }
  }

  #write(text: string, droppable: boolean): Promise<void> {
    if (this.#closed) return Promise.resolve();
    // A client this far behind loses what can be lost; answers are bounded by the window instead.
    if (droppable && this.#behind) {
      this.#noteBehind().dropped += 1;
      return Promise.resolve();
    }
    const taken = this.#stdout.write(text);
    if (this.#episode !== undefined) this.#episode.largestBacklog = Math.max(this.#episode.largestBacklog, this.#stdout.writableLength);
    if (taken) return Promise.resolve();
    return new Promise((resolve) => this.#drainWaiters.push(resolve));
  }

  /** The episode of the client being behind, logged once as it starts. */
  #noteBehind(): { dropped: number; largestBacklog: number } {
    if (this.#episode !== undefined) return this.#episode;
    const backlog = this.#stdout.writableLength;
    const err = new HelixError('R-CAP-MCP-OUTPUT-BACKLOG', {
      message: `The client has ${backlog} bytes of output unread, over the ${this.maxBacklogBytes}-byte bound: until it reads, its new requests wait and notifications are dropped.`,
      details: { backlog_bytes: backlog, max_backlog_bytes: this.maxBacklogBytes },
    });
    this.#log(`${err.code}: ${err.message}`);
    this.#episode = { dropped: 0, largestBacklog: backlog };
    return this.#episode;
  }

  /** Starts waiting requests as far as the window and the client's reading allow. */
  #pump(): void {
    // Not re-entered: a request answered at once (the guard's refusals) frees its place while the
    // loop below runs, and the loop sees it; recursing instead could go as deep as the queue.
    if (this.#closed || this.#pumping) return;
    this.#pumping = true;
    try {
      this.#window.pump(() => !this.#behind);
    } finally {
      this.#pumping = false;
    }
    if (this.#window.waitingBytes > 0 && this.#behind) this.#noteBehind();
    if (this.#pausedInput && this.#window.waitingBytes <= this.maxMessageBytes) {
      this.#pausedInput = false;
      this.#stdin.resume();
    }
  }

  #pauseInput(): void {
    if (this.#pausedInput) return;
    this.#pausedInput = true;
    this.#stdin.pause();
  }

  readonly #onDrain = (): void => {
    for (const resolve of this.#drainWaiters.splice(0)) resolve();
    if (this.#episode !== undefined && !this.#behind) {
      this.#log(
        `the client caught up: at most ${this.#episode.largestBacklog} bytes were unread; ${this.#episode.dropped} notification(s) dropped`,
      );
      this.#episode = undefined;
    }
    this.#pump();
  };

  /** The client closed its side: nothing more can come, so the connection ends (calls in flight are cancelled). */
  readonly #onEnd = (): void => void this.close();

  readonly #onStreamError = (err: Error): void => {
    this.onerror?.(err);
    // A broken pipe either way is the end of this connection.
    void this.close();
  };
}
