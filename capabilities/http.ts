// The http.request capability: outbound HTTP for a tool, only to origins both its manifest and
// the policy allow, never to private addresses unless listed, bounded in size and time.
//
// Every rule is enforced here, in the host, because the guest is untrusted: it sees only the
// result or an error envelope. The rules exist for server-side request forgery (a tool made to
// reach the host's own network or cloud metadata), DNS rebinding (a name that resolves to a
// public address when checked and a private one when used) and redirect laundering (an allowed
// server bouncing the request to a refused one).
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { HelixError, isHelixError } from '../abi/index.js';
import {
  checkAddresses,
  checkHeaders,
  checkOrigin,
  compileAllowPrivate,
  parseTarget,
  type PrivateAllowList,
  type Target,
} from './http-guard.js';
import {
  CallDeadline,
  discard,
  networkError,
  pinnedAgent,
  readBounded,
  resolveTarget,
  sendOnce,
  systemResolver,
  type ResolvedAddress,
  type Resolver,
  type TlsOptions,
} from './http-transport.js';
import type { CapabilityContext, CapabilityDefinition } from './types.js';

/** Longest URL accepted, in characters. */
export const MAX_URL_CHARS = 8192;
/** Longest request body accepted, in characters of the encoded string (about 16 MiB of base64). */
export const MAX_REQUEST_BODY_CHARS = 22_369_624;

/** Arguments of `http.request`. */
export const HttpArgsSchema = z.strictObject({
  method: z.enum(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']).default('GET'),
  url: z.string().min(1).max(MAX_URL_CHARS),
  headers: z.record(z.string(), z.string()).optional(),
  body: z.string().max(MAX_REQUEST_BODY_CHARS).optional(),
  body_encoding: z.enum(['utf8', 'base64']).default('utf8'),
  /** Capped by the policy's network.maxResponseBytes; a larger body is an error, never truncated. */
  max_response_bytes: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).optional(),
});
export type HttpArgs = z.output<typeof HttpArgsSchema>;

/**
 * Result of `http.request`: the final response after redirects. There is no `truncated` flag: a
 * body over the limit fails with R-CAP-HTTP-RESPONSE-TOO-LARGE, so a body is always complete.
 */
export const HttpResultSchema = z.strictObject({
  status: z.number().int().min(100).max(999),
  /** Lowercase names; repeated headers joined with ", " (as fetch's Headers.get does). */
  headers: z.record(z.string(), z.string()),
  /** The raw bytes (no content decoding): UTF-8 text as is, anything else as base64. */
  body: z.string(),
  body_encoding: z.enum(['utf8', 'base64']),
  /** The URL that answered, after any redirects. */
  url: z.string(),
});
export type HttpResult = z.infer<typeof HttpResultSchema>;

/** Ports of the capability, so tests can fake DNS and trust their own CA. */
export interface HttpRequestOptions {
  readonly resolve?: Resolver;
  readonly tls?: TlsOptions;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
// Headers that describe a body: dropped when a redirect turns the request into a bodiless GET.
const BODY_HEADERS = ['content-type', 'content-encoding', 'content-language', 'content-location'];
// Credentials meant for one origin must not follow a redirect to another one.
const CREDENTIAL_HEADERS = ['authorization', 'cookie'];
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Creates the `http.request` capability with the given ports (defaults: system DNS, system CAs). */
export function createHttpRequest(options: HttpRequestOptions = {}): CapabilityDefinition<HttpArgs, HttpResult> {
  const resolve = options.resolve ?? systemResolver;
  return {
    name: 'http.request',
    description:
      "Outbound HTTP(S) to origins allowed by both the tool's manifest and the policy; private addresses refused; size and time bounded.",
    privileged: false,
    journal: 'value',
    args: HttpArgsSchema,
    result: HttpResultSchema,
    invoke: (args, ctx) => run(args, ctx, resolve, options.tls ?? {}),
  };
}

/** The `http.request` capability with the system resolver and CAs. */
export const httpRequest: CapabilityDefinition<HttpArgs, HttpResult> = createHttpRequest();

async function run(args: HttpArgs, ctx: CapabilityContext, resolve: Resolver, tls: TlsOptions): Promise<HttpResult> {
  const policy = ctx.policy.network;
  const allowPrivate = compileAllowPrivate(policy.allowPrivate);
  const limit = Math.min(args.max_response_bytes ?? policy.maxResponseBytes, policy.maxResponseBytes);
  let method: string = args.method;
  let headers = checkHeaders(args.headers ?? {});
  let body = requestBody(args);
  const deadline = new CallDeadline(ctx.deadlineMs, ctx.signal);
  try {
    let target = parseTarget(args.url);
    let redirect: Redirect | undefined;
    for (let hop = 0; ; hop += 1) {
      let addresses: readonly ResolvedAddress[];
      try {
        addresses = await admit(target, ctx, allowPrivate, resolve, deadline);
      } catch (err) {
        throw redirect === undefined ? err : refusedRedirect(err, redirect);
      }
      const agent = pinnedAgent(target, addresses, tls);
      try {
        const response = await sendOnce(target, { method, headers, body }, agent, deadline);
        const location = response.headers.location;
        if (!REDIRECTS.has(response.statusCode) || typeof location !== 'string')
          return await finish(target, method, response, limit, deadline);
        discard(response.body);
        if (hop >= policy.maxRedirects) throw redirectLimit(target, hop, policy.maxRedirects);
        redirect = { hop: hop + 1, from: target, to: resolveLocation(location, target.url) };
        try {
          target = parseTarget(redirect.to);
        } catch (err) {
          throw refusedRedirect(err, redirect);
        }
        // Method rewriting as browsers and fetch do it: 303 always, 301/302 for POST, become GET.
        if (response.statusCode === 303 ? method !== 'HEAD' : response.statusCode <= 302 && method === 'POST') {
          method = 'GET';
          body = undefined;
          headers = without(headers, BODY_HEADERS);
        }
        if (target.origin !== redirect.from.origin) headers = without(headers, CREDENTIAL_HEADERS);
      } finally {
        void agent.destroy().catch(() => undefined);
      }
    }
  } finally {
    deadline.dispose();
  }
}

/** A redirect being followed: which hop, from where, to where (Location resolved against `from`). */
interface Redirect {
  readonly hop: number;
  readonly from: Target;
  readonly to: string;
}

/**
 * Rules 1 and 2 for one hop: the origin is allowed, then every address it resolves to is; the
 * addresses are returned so the connection is pinned to exactly what was checked.
 */
async function admit(
  target: Target,
  ctx: CapabilityContext,
  allow: PrivateAllowList,
  resolve: Resolver,
  deadline: CallDeadline,
): Promise<readonly ResolvedAddress[]> {
  checkOrigin(target, ctx.manifest.network, ctx.policy.network.allow);
  const addresses = await resolveTarget(target, resolve, deadline);
  checkAddresses(
    target,
    addresses.map((a) => a.address),
    allow,
  );
  return addresses;
}

function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).href;
  } catch {
    return location;
  }
}

// A Location may carry someone's user:password@; messages and details show it without.
function withoutUserinfo(href: string): string {
  return href.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1');
}

/**
 * Wraps a refusal of a redirect's target so it names the hop and both ends: without it, a
 * refusal for a host the tool never asked for would be a puzzle. Failures that are not
 * refusals (DNS, timeouts) pass through unchanged.
 */
function refusedRedirect(err: unknown, redirect: Redirect): unknown {
  if (!isHelixError(err) || !(err.code.startsWith('A-AUTH-') || err.code === 'I-REQ-HTTP-URL')) return err;
  const to = withoutUserinfo(redirect.to);
  // Inner messages read "http.request refused <url>: <reason>"; the reason is what is new here.
  const reason = err.message.includes(': ') ? err.message.slice(err.message.indexOf(': ') + 2) : err.message;
  return new HelixError('A-AUTH-HTTP-REDIRECT', {
    message: `http.request refused redirect ${redirect.hop} from ${redirect.from.url.href} to ${to}: ${reason}`,
    details: { ...err.details, hop: redirect.hop, from: redirect.from.url.href, to, refused: err.code },
    hint: err.hint,
    cause: err,
  });
}

function redirectLimit(target: Target, hop: number, max: number): HelixError {
  return new HelixError('R-UPSTREAM-HTTP-REDIRECT-LIMIT', {
    message: `http.request stopped at ${target.url.href}: it redirects again after ${hop} redirect(s), and the policy's network.maxRedirects is ${max}`,
    details: { url: target.url.href, redirects: hop, max_redirects: max },
  });
}

async function finish(
  target: Target,
  method: string,
  response: Dispatcher.ResponseData,
  limit: number,
  deadline: CallDeadline,
): Promise<HttpResult> {
  const tooLarge = (seen: number, declared: boolean): HelixError =>
    new HelixError('R-CAP-HTTP-RESPONSE-TOO-LARGE', {
      message: `http.request refused the response of ${target.url.href}: its body ${declared ? 'declares' : 'ran past'} ${seen} bytes, over the limit of ${limit} bytes`,
      details: { url: target.url.href, limit_bytes: limit, [declared ? 'content_length' : 'read_bytes']: seen },
    });
  // A declared length over the limit fails before a byte is read; HEAD only describes a body.
  const declared = Number(response.headers['content-length']);
  if (method !== 'HEAD' && Number.isSafeInteger(declared) && declared > limit) {
    discard(response.body);
    throw tooLarge(declared, true);
  }
  let bytes: Buffer;
  try {
    bytes = await readBounded(response.body, limit, (seen) => tooLarge(seen, false));
  } catch (err) {
    throw networkError(err, target, deadline, 'reading the response body');
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(response.headers)) {
    if (value !== undefined) headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  const text = decodeUtf8(bytes);
  return {
    status: response.statusCode,
    headers,
    body: text ?? bytes.toString('base64'),
    body_encoding: text === undefined ? 'base64' : 'utf8',
    url: target.url.href,
  };
}

function decodeUtf8(bytes: Buffer): string | undefined {
  try {
    return utf8.decode(bytes);
  } catch {
    return undefined;
  }
}

function requestBody(args: HttpArgs): Buffer | undefined {
  if (args.body === undefined) return undefined;
  if (args.method === 'GET' || args.method === 'HEAD') {
    throw new HelixError('I-REQ-HTTP-BODY', {
      message: `http.request refused a ${args.method} with a body: only POST, PUT, PATCH and DELETE carry one`,
      details: { method: args.method },
    });
  }
  if (args.body_encoding === 'utf8') return Buffer.from(args.body, 'utf8');
  // Node's base64 decoder skips garbage silently; a strict check keeps a typo from sending other bytes.
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(args.body)) {
    throw new HelixError('I-REQ-HTTP-BODY', {
      message: 'http.request refused the body: body_encoding is base64 but the body is not valid base64',
      details: { body_encoding: 'base64' },
    });
  }
  return Buffer.from(args.body, 'base64');
}

function without(headers: Record<string, string>, names: readonly string[]): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !names.includes(name)));
}
