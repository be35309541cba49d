// The network side of http.request: resolve a host once, connect only to the addresses that
// were checked, and bound every wait and every body by the call's deadline and size limit.
import { promises as dns, type LookupAddress, type LookupOptions } from 'node:dns';
import type { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import { HelixError, isHelixError } from '../abi/index.js';
import type { Target } from './http-guard.js';

/** An address a host name resolved to. */
export interface ResolvedAddress {
  readonly address: string;
  readonly family: 4 | 6;
}

/** Resolves a host name to every address it has (a port, so tests can fake DNS). */
export type Resolver = (hostname: string) => Promise<readonly ResolvedAddress[]>;

/** The system resolver (getaddrinfo, so /etc/hosts counts), returning every address in order. */
export const systemResolver: Resolver = async (hostname) => {
  const found = await dns.lookup(hostname, { all: true, verbatim: true });
  return found.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

/**
 * The call's deadline and cancellation as one signal. The deadline is a timer of its own rather
 * than trust in the broker's signal, so a slow body fails on time even if nobody else is watching.
 */
export class CallDeadline {
  private readonly controller = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly onParentAbort = (): void => this.controller.abort(this.parent.reason);
  private timedOut = false;

  constructor(
    private readonly deadlineMs: number,
    private readonly parent: AbortSignal,
  ) {
    this.timer = setTimeout(
      () => {
        this.timedOut = true;
        this.controller.abort(new Error('deadline'));
      },
      Math.max(0, deadlineMs - Date.now()),
    );
    if (parent.aborted) this.onParentAbort();
    else parent.addEventListener('abort', this.onParentAbort, { once: true });
  }

  /** Aborted at the deadline or when the call is cancelled. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the deadline has passed or the call was cancelled. */
  get aborted(): boolean {
    return this.controller.signal.aborted || Date.now() >= this.deadlineMs;
  }

  /** The error for an aborted wait: the broker's own reason if it gave a HelixError, else R-TIMEOUT-001. */
  error(url: string, phase: string): HelixError {
    const reason: unknown = this.parent.reason;
    if (!this.timedOut && this.parent.aborted && isHelixError(reason)) return reason;
    const cancelled = !this.timedOut && this.parent.aborted;
    return new HelixError('R-TIMEOUT-001', {
      message: `http.request to ${url} ${cancelled ? 'was cancelled' : "did not finish before the call's deadline"} while ${phase}`,
      details: { url, phase, deadline_ms: this.deadlineMs, cancelled },
    });
  }

  /** Waits for `promise`, failing with R-TIMEOUT-001 if the deadline comes first. */
  async race<T>(promise: Promise<T>, url: string, phase: string): Promise<T> {
    if (this.aborted) throw this.error(url, phase);
    let onAbort = (): void => undefined;
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(this.error(url, phase));
      this.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([promise, aborted]);
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Stops the timer and detaches from the parent signal. */
  dispose(): void {
    clearTimeout(this.timer);
    this.parent.removeEventListener('abort', this.onParentAbort);
  }
}

/** Resolves the target once: an IP literal is its own address; a name goes to the resolver. */
export async function resolveTarget(target: Target, resolve: Resolver, deadline: CallDeadline): Promise<readonly ResolvedAddress[]> {
  if (target.ipLiteral !== 0) return [{ address: target.hostname, family: target.ipLiteral }];
  let found: readonly ResolvedAddress[];
  try {
    found = await deadline.race(resolve(target.hostname), target.url.href, `resolving ${target.hostname}`);
  } catch (err) {
    if (isHelixError(err)) throw err;
    throw new HelixError('R-UPSTREAM-HTTP-DNS', {
      message: `http.request could not resolve ${target.hostname} for ${target.url.href}: ${errorCode(err) ?? String(err)}`,
      details: { url: target.url.href, host: target.hostname, cause_code: errorCode(err) ?? null },
      cause: err,
    });
  }
  if (found.length === 0) {
    throw new HelixError('R-UPSTREAM-HTTP-DNS', {
      message: `http.request could not resolve ${target.hostname}: no addresses`,
      details: { url: target.url.href, host: target.hostname },
    });
  }
  return found;
}

/** TLS settings for the agent; `ca` replaces the system roots (tests pass their own CA). */
export interface TlsOptions {
  readonly ca?: string | Buffer;
}

/**
 * An agent that can only reach `addresses`: its socket lookup answers from the checked list and
 * never asks DNS again, so a record that changes between check and connect (DNS rebinding)
 * cannot move the connection. The URL keeps the host name, so TLS still sends it as SNI and
 * verifies the certificate against it, and the Host header still names it.
 */
export function pinnedAgent(target: Target, addresses: readonly ResolvedAddress[], tls: TlsOptions = {}): Agent {
  const lookup = (
    name: string,
    options: LookupOptions,
    callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
  ): void => {
    const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
    const first = wanted[0];
    if (name.toLowerCase().replace(/\.$/, '') !== target.hostname || first === undefined) {
      const err: NodeJS.ErrnoException = Object.assign(new Error(`pinned lookup has no address for ${name}`), { code: 'ENOTFOUND' });
      callback(err, '', 4);
      return;
    }
    if (options.all === true)
      callback(
        null,
        wanted.map((a) => ({ address: a.address, family: a.family })),
      );
    else callback(null, first.address, first.family);
  };
  return new Agent({ connect: { lookup, ...(tls.ca === undefined ? {} : { ca: tls.ca }) }, connections: 1 });
}

/** One request without redirects, on a pinned agent; the caller reads or discards the body. */
export async function sendOnce(
  target: Target,
  init: { method: string; headers: Record<string, string>; body: Buffer | undefined },
  agent: Dispatcher,
  deadline: CallDeadline,
): Promise<Dispatcher.ResponseData> {
  if (deadline.aborted) throw deadline.error(target.url.href, 'waiting for the response headers');
  try {
    return await request(target.url, {
      dispatcher: agent,
      method: init.method as Dispatcher.HttpMethod,
      headers: init.headers,
      body: init.body ?? null,
      signal: deadline.signal,
    });
  } catch (err) {
    throw networkError(err, target, deadline, 'waiting for the response headers');
  }
}

/** Maps a failure of the socket or HTTP layer to R-TIMEOUT-001 (deadline) or R-UPSTREAM-HTTP-NETWORK. */
export function networkError(err: unknown, target: Target, deadline: CallDeadline, phase: string): HelixError {
  if (isHelixError(err)) return err;
  if (deadline.aborted) return deadline.error(target.url.href, phase);
  const code = errorCode(err);
  return new HelixError('R-UPSTREAM-HTTP-NETWORK', {
    message: `http.request to ${target.url.href} failed while ${phase}: ${code ?? 'error'}: ${err instanceof Error ? err.message : String(err)}`,
    details: { url: target.url.href, host: target.hostname, phase, cause_code: code ?? null },
    cause: err,
  });
}

/**
 * Reads a body up to `limit` bytes and stops the moment it goes past: the host never buffers
 * more than the limit plus one chunk, whatever the server sends or claims.
 */
export async function readBounded(body: Readable, limit: number, tooLarge: (seen: number) => HelixError): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > limit) {
      discard(body);
      throw tooLarge(size);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}

/**
 * Drops a body the caller will not read (a redirect's, an oversized one) and closes its
 * connection. undici reports a destroyed body as an 'error' event; nobody waits on it any more.
 */
export function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 4; e = e.cause, depth += 1) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code === 'string') return code;
  }
  return undefined;
}
