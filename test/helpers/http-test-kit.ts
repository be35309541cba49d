// Test fixtures for http.request: local HTTP(S) servers that record what reached them, and a
// capability context built from a real policy, so tests drive real sockets and no outside network.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { TLSSocket } from 'node:tls';
import type { z } from 'zod';
import { HelixError, PolicySchema } from '../../abi/index.js';
import { httpRequest, type HttpArgsSchema, type HttpResult } from '../../capabilities/http.js';
import type { CapabilityContext } from '../../capabilities/types.js';

/** A request as the test server saw it. */
export interface RecordedRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
  /** The SNI name the client sent (HTTPS only). */
  readonly servername: string | undefined;
}

/** A running local server. */
export interface TestServer {
  readonly port: number;
  /** `http://127.0.0.1:<port>` (or https). */
  readonly origin: string;
  /** Every request that reached the server, in order. */
  readonly hits: RecordedRequest[];
  close(): Promise<void>;
}

/** Answers one request; the request body has already been read. */
export type TestHandler = (req: RecordedRequest, res: ServerResponse) => void;

/** Starts a server on 127.0.0.1 with an ephemeral port; with `tls`, an HTTPS server. */
export async function startServer(handler: TestHandler, tls?: { key: string; cert: string }): Promise<TestServer> {
  const hits: RecordedRequest[] = [];
  const onRequest = (req: IncomingMessage, res: ServerResponse): void => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const servername = (req.socket as Partial<TLSSocket>).servername;
      const recorded = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: Buffer.concat(chunks),
        servername: typeof servername === 'string' ? servername : undefined,
      };
      hits.push(recorded);
      handler(recorded, res);
    });
  };
  const server: Server = tls === undefined ? createHttpServer(onRequest) : createHttpsServer(tls, onRequest);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('server has no port');
  return {
    port: address.port,
    origin: `${tls === undefined ? 'http' : 'https'}://127.0.0.1:${address.port}`,
    hits,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The network rules and call limits a test context is built from. */
export interface TestContextOptions {
  /** The manifest's capabilities.network. */
  readonly manifest?: readonly string[];
  /** The policy's network.allow. */
  readonly allow?: readonly string[];
  readonly allowPrivate?: readonly string[];
  readonly maxResponseBytes?: number;
  readonly maxRedirects?: number;
  /** Milliseconds from now to the call's deadline (default 10 s). */
  readonly timeoutMs?: number;
  readonly signal?: AbortSignal;
}

// http.request reaches none of the other ports; touching one is a bug worth a loud failure.
const unused = new Proxy(
  {},
  {
    get(_target, prop) {
      throw new Error(`http.request must not use ports, but read ${String(prop)}`);
    },
  },
) as never;

/** A capability context for http.request, with a policy parsed by the real schema. */
export function testContext(options: TestContextOptions = {}): CapabilityContext {
  const policy = PolicySchema.parse({
    version: 1,
    tools: { allow: ['*'] },
    network: {
      allow: [...(options.allow ?? [])],
      allowPrivate: [...(options.allowPrivate ?? [])],
      ...(options.maxResponseBytes === undefined ? {} : { maxResponseBytes: options.maxResponseBytes }),
      ...(options.maxRedirects === undefined ? {} : { maxRedirects: options.maxRedirects }),
    },
  });
  return {
    toolId: 'test.http',
    runId: 'run_test',
    manifest: { allow: ['http.request'], network: [...(options.manifest ?? [])] },
    policy,
    deadlineMs: Date.now() + (options.timeoutMs ?? 10_000),
    signal: options.signal ?? new AbortController().signal,
    artifacts: unused,
    kv: unused,
    log: unused,
    secrets: unused,
    clock: unused,
    checkpoints: unused,
    imports: unused,
    callSeq: 1,
  };
}

/** A context whose manifest and policy both allow exactly `origins`, with 127.0.0.1 allowed as private. */
export function allowing(origins: readonly string[], extra: Omit<TestContextOptions, 'manifest' | 'allow'> = {}): CapabilityContext {
  return testContext({ allowPrivate: ['127.0.0.1'], ...extra, manifest: origins, allow: origins });
}

/** http.request's arguments as a test writes them (defaults not yet applied). */
export type HttpArgs = z.input<typeof HttpArgsSchema>;

/** One http.request call (or `cap`, a variant made with createHttpRequest) with parsed args. */
export async function callHttp(args: HttpArgs, ctx: CapabilityContext, cap = httpRequest): Promise<HttpResult> {
  return cap.invoke(cap.args.parse(args), ctx);
}

/** The HelixError an http.request call is refused with; throws if it succeeds or fails otherwise. */
export async function httpRefusal(args: HttpArgs, ctx: CapabilityContext, cap = httpRequest): Promise<HelixError> {
  const err: unknown = await callHttp(args, ctx, cap).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!(err instanceof HelixError)) throw new Error(`expected a HelixError, got ${String(err)}`);
  return err;
}
