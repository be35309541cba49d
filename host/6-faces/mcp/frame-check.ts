// What the stdio transport does with each frame: hand a JSON-RPC 2.0 message on, answer a broken
// one with the error JSON-RPC 2.0 prescribes, or (a broken notification or response) only log it.
import {
  JSONRPCMessageSchema,
  RequestIdSchema,
  RequestSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { Frame } from './frame-reader.js';
import { kindOf, violationsOf, violationsText } from './issue-text.js';
import { RpcCode, rpcError, type RpcError } from './rpc-errors.js';

/** The transport's decision about one frame. */
export type Verdict =
  | { readonly kind: 'message'; readonly message: JSONRPCMessage }
  /** Answer with this error; `id` null when the frame's id could not be read. */
  | { readonly kind: 'reply'; readonly id: RequestId | null; readonly error: RpcError }
  /** No answer is allowed (a notification or a response); `why` goes to the log. */
  | { readonly kind: 'ignore'; readonly why: string }
  /** An empty or blank line: nothing to do. */
  | { readonly kind: 'blank' };

const MEMBERS = new Set(['jsonrpc', 'id', 'method', 'params']);
const utf8 = new TextDecoder('utf-8', { fatal: true });

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function invalid(id: RequestId | null, line: number, problem: string): Verdict {
  return {
    kind: 'reply',
    id,
    error: rpcError(RpcCode.InvalidRequest, 'I-REQ-MCP-INVALID-MESSAGE', `Invalid request (stdin line ${line}): ${problem}.`, { line }),
  };
}

/** The first thing that keeps an object from being a JSON-RPC 2.0 request or notification. */
function structuralProblem(v: Record<string, unknown>, idValid: boolean): string | undefined {
  if (v.jsonrpc !== '2.0') return `jsonrpc must be "2.0", not ${Object.hasOwn(v, 'jsonrpc') ? kindOf(v.jsonrpc) : 'missing'}`;
  if (Object.hasOwn(v, 'id') && !idValid) return `id must be a string or an integer, not ${kindOf(v.id)}`;
  if (!Object.hasOwn(v, 'method')) return 'the message has no method (a request needs a string "method")';
  if (typeof v.method !== 'string') return `method must be a string, not ${kindOf(v.method)}`;
  const extra = Object.keys(v).find((k) => !MEMBERS.has(k));
  if (extra !== undefined)
    return `unexpected member ${JSON.stringify(extra.slice(0, 64))} (a request has only jsonrpc, id, method and params)`;
  return undefined;
}

/** Checks a parsed value against JSON-RPC 2.0 as MCP uses it (no batches, string or integer ids). */
export function checkValue(value: unknown, line: number): Verdict {
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return lostMember(value, line) ?? { kind: 'message', message: parsed.data };
  if (Array.isArray(value)) {
    const error = rpcError(
      RpcCode.InvalidRequest,
      'I-REQ-MCP-BATCH',
      `Invalid request (stdin line ${line}): a batch array of ${value.length} message${value.length === 1 ? '' : 's'}; MCP 2025-06-18 and later have no JSON-RPC batching, so send each message as a line of its own.`,
      { line },
    );
    return { kind: 'reply', id: null, error };
  }
  if (!isObject(value)) return invalid(null, line, `a JSON-RPC message is an object, not ${kindOf(value)}`);
  const idValid = RequestIdSchema.safeParse(value.id).success;
  const id = idValid ? (value.id as RequestId) : null;
  // Answering a response would let two peers trade errors for ever; JSON-RPC answers requests only.
  if (!Object.hasOwn(value, 'method') && (Object.hasOwn(value, 'result') || Object.hasOwn(value, 'error'))) {
    return {
      kind: 'ignore',
      why: `stdin line ${line}: a response that is not valid JSON-RPC 2.0 (id ${idValid ? String(id) : kindOf(value.id)}), dropped`,
    };
  }
  const problem = structuralProblem(value, idValid);
  if (problem !== undefined) return invalid(id, line, problem);
  // A well-formed request or notification whose params (or their _meta) are wrong.
  const violations = violationsOf(RequestSchema.safeParse(value).error?.issues ?? [], value);
  if (violations.length === 0) return invalid(id, line, 'not a JSON-RPC 2.0 request, notification or response');
  const text = violationsText(violations);
  if (!Object.hasOwn(value, 'id'))
    return {
      kind: 'ignore',
      why: `stdin line ${line}: notification ${String(value.method)} has invalid params (${text}); a notification gets no reply`,
    };
  return {
    kind: 'reply',
    id,
    error: rpcError(RpcCode.InvalidParams, 'I-REQ-MCP-PARAMS', `Invalid params of ${String(value.method)}: ${text}.`, {
      line,
      method: value.method,
      violations,
    }),
  };
}

/**
 * The SDK's schemas rebuild `params`, its `_meta` and a tool call's `arguments` member by member,
 * and an assignment to `__proto__` sets a prototype instead of a member: such a member would
 * vanish before the host could refuse it (ABI-JSON-004), so the frame is refused here.
 */
function lostMember(value: unknown, line: number): Verdict | undefined {
  if (!isObject(value) || !isObject(value.params)) return undefined;
  const { params } = value;
  const where = [
    ['params', params],
    ['params._meta', params._meta],
    ['params.arguments', params.arguments],
  ].find(([, v]) => isObject(v) && Object.hasOwn(v, '__proto__'))?.[0] as string | undefined;
  if (where === undefined) return undefined;
  const text = `${where} has a member named "__proto__", which Helix refuses because it cannot be carried as plain data (ABI-JSON-004); rename it`;
  if (!Object.hasOwn(value, 'id'))
    return { kind: 'ignore', why: `stdin line ${line}: notification ${String(value.method)}: ${text}; a notification gets no reply` };
  const id = RequestIdSchema.safeParse(value.id).success ? (value.id as RequestId) : null;
  return {
    kind: 'reply',
    id,
    error: rpcError(RpcCode.InvalidParams, 'I-REQ-MCP-PARAMS', `Invalid params of ${String(value.method)}: ${text}.`, {
      line,
      method: value.method,
      pointer: `/${where.replace(/\./g, '/')}/__proto__`,
    }),
  };
}

/** The verdict on one frame of the reader. */
export function checkFrame(frame: Frame, maxBytes: number): Verdict {
  if (frame.kind === 'oversize') return oversize(frame, maxBytes);
  let text: string;
  try {
    text = utf8.decode(frame.bytes);
  } catch {
    return {
      kind: 'reply',
      id: null,
      error: rpcError(RpcCode.ParseError, 'I-REQ-MCP-PARSE', `Parse error (stdin line ${frame.line}): the line is not valid UTF-8.`, {
        line: frame.line,
      }),
    };
  }
  if (text.trim() === '') return { kind: 'blank' };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    const why = err instanceof Error ? err.message : String(err);
    return {
      kind: 'reply',
      id: null,
      error: rpcError(RpcCode.ParseError, 'I-REQ-MCP-PARSE', `Parse error (stdin line ${frame.line}): the line is not JSON (${why}).`, {
        line: frame.line,
      }),
    };
  }
  return checkValue(value, frame.line);
}

function oversize(frame: Extract<Frame, { kind: 'oversize' }>, maxBytes: number): Verdict {
  const { head, line, length } = frame;
  const size = `stdin line ${line} is ${length} bytes, over the ${maxBytes}-byte bound (--max-message-bytes)`;
  if (head.hasResult && !head.hasMethod) return { kind: 'ignore', why: `${size}: a response, dropped unread` };
  if (head.hasMethod && !head.hasId) return { kind: 'ignore', why: `${size}: a notification, dropped unread` };
  const message = `Invalid request (${size}); it was dropped unread. Import large data as an artifact and pass its id.`;
  return {
    kind: 'reply',
    id: head.id ?? null,
    error: rpcError(RpcCode.InvalidRequest, 'I-REQ-MCP-MESSAGE-TOO-LARGE', message, { line, bytes: length, max_message_bytes: maxBytes }),
  };
}
