// Flow control of one stdio connection: at most so many requests are handled at once, and none
// while the client is behind on reading; the rest wait, in bounded memory, in arrival order.
import type { JSONRPCMessage, RequestId } from '@modelcontextprotocol/sdk/types.js';

/** Default number of requests a connection may have unanswered at once (ABI-MCP-009). */
export const DEFAULT_MAX_IN_FLIGHT = 64;

/**
 * Counts the requests handed to the server until each is answered (or cancelled: MCP sends no
 * answer then), and holds back the requests that arrive while the window is full or closed.
 * Notifications and responses never wait: a client must be able to cancel a request it sent.
 */
export class RequestWindow {
  readonly maxInFlight: number;
  readonly #deliver: (message: JSONRPCMessage) => void;
  /** Unanswered requests by id; a count, since a client may reuse an id. */
  readonly #inFlight = new Map<RequestId, number>();
  #count = 0;
  #waiting: Array<{ readonly message: JSONRPCMessage & { id: RequestId }; readonly bytes: number }> = [];
  #waitingBytes = 0;

  constructor(maxInFlight: number, deliver: (message: JSONRPCMessage) => void) {
    this.maxInFlight = maxInFlight;
    this.#deliver = deliver;
  }

  /** Requests handed over and not yet answered. */
  get inFlight(): number {
    return this.#count;
  }

  /** Bytes of the requests waiting their turn. */
  get waitingBytes(): number {
    return this.#waitingBytes;
  }

  /** Hands `message` over now, or queues it when it is a request and `open` is false or the window full. */
  offer(message: JSONRPCMessage, bytes: number, open: boolean): void {
    if (!('method' in message) || !('id' in message)) {
      if ('method' in message && message.method === 'notifications/cancelled') this.#cancel(message.params?.requestId);
      this.#deliver(message);
      return;
    }
    if (open && this.#waiting.length === 0 && this.#count < this.maxInFlight) this.#start(message);
    else {
      this.#waiting.push({ message, bytes });
      this.#waitingBytes += bytes;
    }
  }

  /** The server answered request `id`: its place in the window is free. */
  answered(id: RequestId): void {
    const n = this.#inFlight.get(id);
    if (n === undefined) return;
    if (n <= 1) this.#inFlight.delete(id);
    else this.#inFlight.set(id, n - 1);
    this.#count -= 1;
  }

  /** Hands over waiting requests while `open()` holds and the window has room. */
  pump(open: () => boolean): void {
    while (this.#waiting.length > 0 && this.#count < this.maxInFlight && open()) {
      const next = this.#waiting.shift()!;
      this.#waitingBytes -= next.bytes;
      this.#start(next.message);
    }
  }

  /** Forgets everything (the connection closed). */
  clear(): void {
    this.#inFlight.clear();
    this.#count = 0;
    this.#waiting = [];
    this.#waitingBytes = 0;
  }

  #start(message: JSONRPCMessage & { id: RequestId }): void {
    this.#inFlight.set(message.id, (this.#inFlight.get(message.id) ?? 0) + 1);
    this.#count += 1;
    this.#deliver(message);
  }

  /** A cancelled request that still waits is dropped; one in flight will get no answer. */
  #cancel(id: unknown): void {
    if (typeof id !== 'string' && typeof id !== 'number') return;
    const at = this.#waiting.findIndex((w) => w.message.id === id);
    if (at !== -1) {
      this.#waitingBytes -= this.#waiting[at]!.bytes;
      this.#waiting.splice(at, 1);
      return;
    }
    this.answered(id);
  }
}
