// Between any transport and the SDK's Server: unknown methods and bad params are answered here
// (-32601, -32602, in words), before the SDK's own parse could turn them into a -32603 zod dump,
// and every error on the way out loses the prefix McpError adds to its message.
import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  CancelledNotificationSchema,
  InitializedNotificationSchema,
  InitializeRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  PingRequestSchema,
  ProgressNotificationSchema,
  ReadResourceRequestSchema,
  SetLevelRequestSchema,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import type { z } from 'zod';
import { violationsOf, violationsText } from './issue-text.js';
import { errorResponse, RpcCode, rpcError, wireMessage, type RpcError } from './rpc-errors.js';

/** Every request method the Helix server answers, with the SDK schema its handler parses. */
export const REQUEST_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['tools/call', CallToolRequestSchema],
  ['resources/list', ListResourcesRequestSchema],
  ['resources/templates/list', ListResourceTemplatesRequestSchema],
  ['resources/read', ReadResourceRequestSchema],
  ['logging/setLevel', SetLevelRequestSchema],
]);

/** The client notifications the server acts on; any other is ignored, as MCP allows. */
export const NOTIFICATION_SCHEMAS: ReadonlyMap<string, z.ZodType> = new Map<string, z.ZodType>([
  ['notifications/initialized', InitializedNotificationSchema],
  ['notifications/cancelled', CancelledNotificationSchema],
  ['notifications/progress', ProgressNotificationSchema],
]);

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Why a request cannot reach its handler, or undefined when it can. */
export function requestError(method: string, message: unknown): RpcError | undefined {
  const schema = REQUEST_SCHEMAS.get(method);
  const methods = [...REQUEST_SCHEMAS.keys()];
  if (schema === undefined) {
    const shown = method.length <= 100 ? JSON.stringify(method) : `${JSON.stringify(method.slice(0, 100))}…`;
    return rpcError(RpcCode.MethodNotFound, 'I-REQ-MCP-METHOD', `Method not found: ${shown}; this server answers ${methods.join(', ')}.`, {
      method: method.slice(0, 100),
      methods,
    });
  }
  const parsed = schema.safeParse(message);
  if (parsed.success) return undefined;
  const violations = violationsOf(parsed.error.issues, message);
  return rpcError(RpcCode.InvalidParams, 'I-REQ-MCP-PARAMS', `Invalid params of ${method}: ${violationsText(violations)}.`, {
    method,
    violations,
  });
}

/**
 * A request without the task augmentation this server does not offer: MCP 2025-11-25 says a
 * receiver without the tasks capability processes the request normally, ignoring `params.task`.
 */
function withoutTask(message: JSONRPCMessage): JSONRPCMessage {
  if (!('params' in message) || !isRecord(message.params) || !Object.hasOwn(message.params, 'task')) return message;
  const { task: _task, ...params } = message.params;
  return { ...message, params } as JSONRPCMessage;
}

/** The message as it goes on the wire: an error's message without the McpError prefix, bounded. */
function outgoing(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message) || !isRecord(message.error)) return message;
  return { ...message, error: { ...message.error, message: wireMessage(message.error.message) } } as JSONRPCMessage;
}

/** Wraps `inner` so that only requests the server can parse reach it; see the file's head. */
export class GuardedTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  readonly #inner: Transport;

  constructor(inner: Transport) {
    this.#inner = inner;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => this.#receive(message, extra);
    if (inner.setProtocolVersion !== undefined) this.setProtocolVersion = (version) => inner.setProtocolVersion?.(version);
  }

  setProtocolVersion?: (version: string) => void;

  get sessionId(): string | undefined {
    return this.#inner.sessionId;
  }

  start(): Promise<void> {
    return this.#inner.start();
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.#inner.send(outgoing(message), options);
  }

  #receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    if ('method' in message && 'id' in message) {
      const error = requestError(message.method, message);
      if (error !== undefined) {
        this.onerror?.(new Error(`answered ${error.code} (id ${JSON.stringify(message.id)}): ${error.message}`));
        this.#reply(message.id, error);
        return;
      }
      this.onmessage?.(withoutTask(message), extra);
      return;
    }
    if ('method' in message) {
      const schema = NOTIFICATION_SCHEMAS.get(message.method);
      const parsed = schema?.safeParse(message);
      if (parsed !== undefined && !parsed.success) {
        this.onerror?.(new Error(`notification ${message.method} dropped: ${violationsText(violationsOf(parsed.error.issues, message))}`));
        return;
      }
    }
    this.onmessage?.(message, extra);
  }

  #reply(id: RequestId, error: RpcError): void {
    this.#inner
      .send(errorResponse(id, error) as JSONRPCMessage)
      .catch((err: unknown) => this.onerror?.(err instanceof Error ? err : new Error(String(err))));
  }
}
