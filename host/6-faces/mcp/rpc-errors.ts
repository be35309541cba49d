// JSON-RPC error responses as Helix sends them: the JSON-RPC code, a message in words, and the
// Helix error (taxonomy code, details, hint) as `data`, the way every other Helix refusal reads.
import { ErrorCode as RpcCode, type RequestId } from '@modelcontextprotocol/sdk/types.js';
import type { ErrorCode } from '../../../abi/index.js';
import { HelixError } from '../../../abi/index.js';

export { RpcCode };

/** The `error` member of a JSON-RPC error response. */
export interface RpcError {
  readonly code: number;
  readonly message: string;
  readonly data?: unknown;
}

/**
 * A JSON-RPC 2.0 error response. `id` is null when the request's id could not be read (JSON-RPC
 * 2.0 section 5: parse errors and invalid requests); the SDK's own type leaves null out.
 */
export interface RpcErrorResponse {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: RpcError;
}

/** Longest error message sent; what a message says fits well within it. */
export const MAX_ERROR_MESSAGE_CHARS = 2048;

/** The error of a refusal: `rpcCode` for JSON-RPC, `helixCode` and its hint in `data`. */
export function rpcError(rpcCode: number, helixCode: ErrorCode, message: string, details: Record<string, unknown> = {}): RpcError {
  return { code: rpcCode, message, data: new HelixError(helixCode, { message, details }).toWire() };
}

/** The error response to the request with `id` (null: unknown). */
export function errorResponse(id: RequestId | null, error: RpcError): RpcErrorResponse {
  return { jsonrpc: '2.0', id, error };
}

/**
 * The SDK's McpError puts `MCP error <code>: ` in front of its message, and the SDK sends that
 * message as it is; a client that wraps the error in an McpError again shows the prefix twice.
 * On the wire the message goes without it.
 */
const MCP_ERROR_PREFIX = /^(?:MCP error -?\d+: )+/;

/** An outgoing error's message as it goes on the wire: without the McpError prefix, bounded. */
export function wireMessage(message: unknown): string {
  const text = typeof message === 'string' && message !== '' ? message.replace(MCP_ERROR_PREFIX, '') : 'Internal error';
  return text.length <= MAX_ERROR_MESSAGE_CHARS
    ? text
    : `${text.slice(0, MAX_ERROR_MESSAGE_CHARS)}… [cut: ${text.length - MAX_ERROR_MESSAGE_CHARS} more characters]`;
}
