// A stand-in for the Helix broker behind `helix_v1.capability_call`, for testing guests without
// the host: it reads the request from guest memory, answers from a table of in-memory
// capabilities (artifacts, kv, log, clock, secrets, http) and writes the answer through the
// guest's own `alloc`, as the sandbox does. Arguments and results are checked against the real
// capability schemas in capabilities/ when they exist, so a wrapper that drifts from the
// contract fails here first.

import { createHash } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { BULK_MAX_PIECE, CapabilityRequestSchema, ERROR_CODES } from '../../../abi/index.js';
import { artifactList, artifactRead, artifactStat, artifactWrite, utf8Cut } from '../../../capabilities/artifact.js';
import type { BulkReadArgs, BulkWriteArgs } from '../../../capabilities/artifact-bulk.js';
import { clockNowUnix } from '../../../capabilities/clock.js';
import { CAPABILITIES, type CapabilityDefinition, parseBulkArgs } from '../../../capabilities/index.js';
import { kvDelete, kvGet, kvList, kvPut } from '../../../capabilities/kv.js';
import { logEmit } from '../../../capabilities/log.js';
import { secretsGet } from '../../../capabilities/secrets.js';
import { FUEL_EXPORT } from '../../../host/2-sandbox/wasm/index.js';
import { instantiate, readText, type ToolExports } from './harness.js';

/** A capability failure the simulation answers with an error envelope. */
export class SimError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
    readonly hint = '',
  ) {
    super(message);
  }
}

/** One stored artifact: its bytes as stored (gzip bytes for a gzip artifact). */
export interface SimArtifact {
  readonly id: string;
  readonly bytes: Uint8Array;
  readonly type: string;
  readonly compression: 'gzip' | null;
  readonly label: string | null;
  readonly createdByRun: string | null;
}

/** One `artifact.write` piece as received, for assertions on piecing. */
export interface SimPiece {
  readonly role: string;
  readonly bytes: number;
  readonly encoding: string;
  readonly final: boolean;
  readonly type?: string;
  readonly label?: string;
}

/** A capability of the table: plain arguments in, a result out, or a SimError thrown. */
export type SimHandler = (args: unknown) => unknown;

/** A capability request's arguments as the simulation received them. */
export type SimArgs = Record<string, unknown>;

/** What an `artifact.write` piece says of itself, through either import. */
type PieceArgs = Pick<BulkWriteArgs, 'role' | 'final' | 'type' | 'label'>;

/**
 * The handler of capability `definition`, typed by its arguments: `answer` hands each handler
 * the arguments its definition's schema produced.
 */
export function on<A>(_definition: CapabilityDefinition<A, unknown>, handle: (args: A) => unknown): SimHandler {
  return (args) => handle(args as A);
}

/** Options of the simulation. */
export interface HostSimOptions {
  /** The tool's allowlist; default every capability in the table. Scoped: `secrets.get.<name>`. */
  allow?: readonly string[];
  /** Output roles the tool declares; default any role. */
  roles?: readonly string[];
  /** Largest piece `artifact.read` returns, whatever the guest asks (to force many pieces). */
  readPieceCap?: number;
  /** Extra or replacement handlers by capability name (e.g. `http.request`). */
  handlers?: Record<string, SimHandler>;
  secrets?: Record<string, string>;
  nowMs?: number;
}

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** The broker's charge per call (host/4-calls/broker: a fixed cost plus one unit per 64 bytes moved). */
const CALL_FUEL = 1000;
const encoder = new TextEncoder();
const FORBIDDEN = JSON.stringify({
  status: 'error',
  abi_version: 1,
  error: { code: 'A-AUTH-FORBIDDEN', message: 'forbidden', details: {}, hint: ERROR_CODES['A-AUTH-FORBIDDEN'].hint },
});

/** The same cut artifact.read makes (shared, so the simulation cannot drift from it). */
export { utf8Cut } from '../../../capabilities/artifact.js';

/** The simulated host: state in plain maps, inspected by the tests. */
export class HostSim {
  readonly artifacts = new Map<string, SimArtifact>();
  readonly kv = new Map<string, unknown>();
  readonly logs: Array<{ level: string; event: string; fields: Record<string, unknown> }> = [];
  /** Every request as parsed, in order. */
  readonly requests: Array<{ name: string; args: SimArgs }> = [];
  readonly pieces: SimPiece[] = [];
  nowMs: number;
  private readonly handlers = new Map<string, SimHandler>();
  private readonly allow: Set<string> | undefined;
  private readonly roles: Set<string> | undefined;
  private readonly outputs = new Map<string, { chunks: Buffer[]; type?: string; label?: string; sealed?: string }>();
  private readonly secrets: Record<string, string>;
  private readonly readPieceCap: number;
  private counter = 0;
  private tool: ToolExports | undefined;

  constructor(options: HostSimOptions = {}) {
    this.allow = options.allow === undefined ? undefined : new Set(options.allow);
    this.roles = options.roles === undefined ? undefined : new Set(options.roles);
    this.readPieceCap = options.readPieceCap ?? Number.MAX_SAFE_INTEGER;
    this.secrets = options.secrets ?? {};
    this.nowMs = options.nowMs ?? 1_700_000_000_123;
    for (const [name, handler] of Object.entries(this.defaultHandlers())) this.handlers.set(name, handler);
    for (const [name, handler] of Object.entries(options.handlers ?? {})) this.handlers.set(name, handler);
  }

  /** Stores `content` (text as UTF-8) as an artifact, gzipped first with `gzip`; returns its id. */
  addArtifact(content: string | Uint8Array, options: { type?: string; label?: string; gzip?: Uint8Array | true } = {}): string {
    const raw = typeof content === 'string' ? encoder.encode(content) : content;
    const id = this.newId();
    const bytes = options.gzip === undefined ? raw : options.gzip === true ? new Uint8Array(gzipSync(raw)) : options.gzip;
    this.artifacts.set(id, {
      id,
      bytes,
      type: options.type ?? 'text',
      compression: options.gzip === undefined ? null : 'gzip',
      label: options.label ?? null,
      createdByRun: null,
    });
    return id;
  }

  /** The content of artifact `id` as text (gunzipped when stored as gzip). */
  artifactText(id: string): string {
    const artifact = this.artifacts.get(id);
    if (artifact === undefined) throw new Error(`no artifact ${id}`);
    return new TextDecoder('utf-8', { fatal: true }).decode(artifact.compression === 'gzip' ? gunzipSync(artifact.bytes) : artifact.bytes);
  }

  /** The imports object a guest is instantiated with (both helix_v1 imports, as under capability ABI 2). */
  imports(): WebAssembly.Imports {
    return {
      helix_v1: {
        capability_call: (ptr: number, len: number) => this.capabilityCall(ptr >>> 0, len >>> 0),
        capability_call_bulk: (ptr: number, len: number, buf: number, bufLen: number) =>
          this.capabilityCallBulk(ptr >>> 0, len >>> 0, buf >>> 0, bufLen >>> 0),
      },
    };
  }

  /** Instantiates `module` against this host for one call: a new run, with no outputs written yet. */
  async instantiate(module: WebAssembly.Module): Promise<ToolExports> {
    this.outputs.clear();
    this.tool = await instantiate(module, this.imports());
    return this.tool;
  }

  /** The response bytes for one request: what the broker would answer. */
  answer(requestText: string): string {
    let json: unknown;
    try {
      json = JSON.parse(requestText);
    } catch (error) {
      return errorText('I-REQ-ENVELOPE', `The capability request is not UTF-8 JSON: ${(error as Error).message}`);
    }
    const parsed = CapabilityRequestSchema.safeParse(json);
    if (!parsed.success)
      return errorText('I-REQ-ENVELOPE', 'The capability request is malformed.', { violations: parsed.error.issues.map((i) => i.message) });
    const { name, args } = parsed.data;
    this.requests.push({ name, args });
    const handler = this.handlers.get(name);
    const definition = CAPABILITIES.get(name);
    if (handler === undefined || !this.allowed(name, args)) return FORBIDDEN;
    let input: unknown = args;
    if (definition !== undefined) {
      const checked = definition.args.safeParse(args);
      if (!checked.success) {
        const violations = checked.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`);
        return errorText('I-REQ-CAPABILITY-ARGS', `${name}: ${violations.join('; ')}`, { violations });
      }
      input = checked.data;
    }
    let result: unknown;
    try {
      result = handler(input);
    } catch (error) {
      if (!(error instanceof SimError)) throw error;
      return errorText(error.code, error.message, error.details, error.hint);
    }
    // The simulation's own results must match the contract too.
    if (definition !== undefined) definition.result.parse(result);
    return JSON.stringify({ status: 'ok', abi_version: 1, capability_result: { name, result } });
  }

  /**
   * The answer to one `capability_call_bulk`: artifact.read copies raw bytes into the buffer,
   * artifact.write takes the buffer as its piece; any other name is an error envelope.
   */
  answerBulk(requestText: string, memory: WebAssembly.Memory, buf: number, bufLen: number): { text: string; moved: number } {
    let request: { name?: unknown; args?: SimArgs } | null;
    try {
      request = JSON.parse(requestText) as { name?: unknown; args?: SimArgs } | null;
    } catch (error) {
      return {
        text: errorText('I-REQ-ENVELOPE', `The capability request is not UTF-8 JSON: ${(error as Error).message}`, {}, '', 2),
        moved: 0,
      };
    }
    const name = request?.name;
    if (name !== 'artifact.read' && name !== 'artifact.write') {
      return {
        text: errorText('I-REQ-BULK-CAPABILITY', `${String(name)} is not served through capability_call_bulk`, { name }, '', 2),
        moved: 0,
      };
    }
    // The host traps here (S-TOOL-BULK-BUFFER, S-TOOL-BAD-POINTER): a guest bug, not an answer.
    if (bufLen > BULK_MAX_PIECE || buf + bufLen > memory.buffer.byteLength)
      throw new Error(`capability_call_bulk: bad buffer [${buf}, ${buf + bufLen})`);
    const checked = parseBulkArgs(name, request?.args, bufLen);
    this.requests.push({ name, args: request?.args ?? {} });
    if (!checked.ok)
      return {
        text: errorText(
          'I-REQ-CAPABILITY-ARGS',
          `${name}: ${checked.violations.map((v) => `${v.path}: ${v.message}`).join('; ')}`,
          {},
          '',
          2,
        ),
        moved: 0,
      };
    if (!this.allowed(name, checked.args)) return { text: FORBIDDEN, moved: 0 };
    const args = checked.args;
    try {
      let result: unknown;
      let moved = 0;
      if (name === 'artifact.read') {
        const read = args as BulkReadArgs;
        const content = this.content(read.artifact_id, read.decompress);
        const data = content.subarray(read.offset, read.offset + Math.min(read.length ?? bufLen, this.readPieceCap));
        new Uint8Array(memory.buffer, buf, data.length).set(data);
        moved = data.length;
        result = {
          bytes: data.length,
          offset: read.offset,
          next_offset: read.offset + data.length,
          eof: read.offset + data.length >= content.length,
        };
      } else {
        const data = Buffer.from(new Uint8Array(memory.buffer, buf, bufLen));
        moved = data.length;
        result = this.appendPiece(args as BulkWriteArgs, data, 'bulk');
      }
      return { text: JSON.stringify({ status: 'ok', abi_version: 2, capability_result: { name, result } }), moved };
    } catch (error) {
      if (!(error instanceof SimError)) throw error;
      return { text: errorText(error.code, error.message, error.details, error.hint, 2), moved: 0 };
    }
  }

  private capabilityCallBulk(ptr: number, len: number, buf: number, bufLen: number): bigint {
    const tool = this.tool;
    if (tool === undefined) throw new Error('capability_call_bulk before instantiate() finished');
    const answer = this.answerBulk(readText(tool.memory, ptr, len), tool.memory, buf, bufLen);
    return this.respond(tool, encoder.encode(answer.text), len + answer.moved);
  }

  private capabilityCall(ptr: number, len: number): bigint {
    const tool = this.tool;
    if (tool === undefined) throw new Error('capability_call before instantiate() finished');
    return this.respond(tool, encoder.encode(this.answer(readText(tool.memory, ptr, len))), len);
  }

  // Charges the call as the broker does and places the answer through the guest's alloc.
  private respond(tool: ToolExports, bytes: Uint8Array, moved: number): bigint {
    // A module instrumented for fuel pays for the call as the broker charges it.
    const fuel = (tool as unknown as Record<string, unknown>)[FUEL_EXPORT];
    if (fuel instanceof WebAssembly.Global)
      fuel.value = (fuel.value as bigint) - BigInt(CALL_FUEL + Math.ceil((moved + bytes.length) / 64));
    const out = tool.alloc(bytes.length) >>> 0;
    new Uint8Array(tool.memory.buffer, out, bytes.length).set(bytes);
    return (BigInt(out) << 32n) | BigInt(bytes.length);
  }

  private allowed(name: string, args: SimArgs): boolean {
    if (this.allow === undefined) return true;
    // Scoped: secrets.get needs secrets.get.<name>; its bare name grants nothing.
    if (name === 'secrets.get') return typeof args.name === 'string' && this.allow.has(`secrets.get.${args.name}`);
    return this.allow.has(name);
  }

  private newId(): string {
    const n = ++this.counter;
    let suffix = '';
    for (let i = 0, v = n; i < 26; i++, v = Math.floor(v / 32)) suffix = CROCKFORD[v % 32] + suffix;
    return `art_${suffix}`;
  }

  private artifact(id: string): SimArtifact {
    const artifact = this.artifacts.get(id);
    if (artifact === undefined)
      throw new SimError(
        'P-PRECOND-ARTIFACT-NOT-FOUND',
        `No artifact ${id}.`,
        { artifact_id: id },
        ERROR_CODES['P-PRECOND-ARTIFACT-NOT-FOUND'].hint,
      );
    return artifact;
  }

  private summary(a: SimArtifact) {
    return {
      id: a.id,
      sha256: createHash('sha256').update(a.bytes).digest('hex'),
      size: a.bytes.length,
      type: a.type,
      compression: a.compression,
      media_type: a.compression === 'gzip' ? 'application/gzip' : 'text/plain',
      label: a.label,
      created_at: 1_700_000_000_000,
      created_by_run: a.createdByRun,
    };
  }

  private defaultHandlers(): Record<string, SimHandler> {
    return {
      'clock.now_unix': on(clockNowUnix, () => ({ unix_ms: this.nowMs, unix_s: Math.floor(this.nowMs / 1000) })),
      'log.emit': on(logEmit, (args) => {
        this.logs.push({ level: args.level, event: args.event, fields: args.fields });
        return { ok: true };
      }),
      'kv.get': on(kvGet, (args) => (this.kv.has(args.key) ? { found: true, value: this.kv.get(args.key) } : { found: false })),
      'kv.put': on(kvPut, (args) => {
        this.kv.set(args.key, structuredClone(args.value));
        return { ok: true };
      }),
      'kv.delete': on(kvDelete, (args) => ({ deleted: this.kv.delete(args.key) })),
      'kv.list': on(kvList, (args) => ({
        keys: [...this.kv.keys()]
          .filter((k) => k.startsWith(args.prefix))
          .sort()
          .slice(0, args.limit),
      })),
      'artifact.stat': on(artifactStat, (args) => this.summary(this.artifact(args.artifact_id))),
      'artifact.list': on(artifactList, (args) => ({
        artifacts: [...this.artifacts.values()]
          .filter((a) => args.type === undefined || a.type === args.type)
          .slice(0, args.limit)
          .map((a) => this.summary(a)),
      })),
      'artifact.read': on(artifactRead, (args) => {
        const content = this.content(args.artifact_id, args.decompress);
        const length = Math.min(args.length, this.readPieceCap);
        const data = content.subarray(args.offset, args.offset + length);
        const eof = args.offset + data.length >= content.length;
        if (args.encoding === 'base64')
          return {
            data: Buffer.from(data).toString('base64'),
            encoding: 'base64',
            offset: args.offset,
            next_offset: args.offset + data.length,
            eof,
          };
        const end = utf8Cut(data, eof);
        const text = new TextDecoder('utf-8', { fatal: false }).decode(data.subarray(0, end));
        return { data: text, encoding: 'utf8', offset: args.offset, next_offset: args.offset + end, eof: eof && end === data.length };
      }),
      'artifact.write': on(artifactWrite, (args) =>
        this.appendPiece(
          args,
          args.encoding === 'base64' ? Buffer.from(args.data, 'base64') : Buffer.from(args.data, 'utf8'),
          args.encoding,
        ),
      ),
      'secrets.get': on(secretsGet, (args) => {
        const value = this.secrets[args.name];
        if (value === undefined)
          throw new SimError('P-PRECOND-SECRET-MISSING', `The secret ${args.name} is not configured.`, { name: args.name });
        return { value };
      }),
    };
  }

  // The content an artifact.read reads: the stored bytes, gunzipped with `decompress`.
  private content(id: string, decompress: boolean): Uint8Array {
    const artifact = this.artifact(id);
    if (!decompress || artifact.compression !== 'gzip') return artifact.bytes;
    try {
      return gunzipSync(artifact.bytes);
    } catch (error) {
      throw new SimError('D-DATA-FORMAT', `artifact ${artifact.id} is not valid gzip: ${(error as Error).message}`);
    }
  }

  // One artifact.write piece (text or bulk) appended to its role; the final one seals it.
  private appendPiece(args: PieceArgs, bytes: Buffer, encoding: string): unknown {
    if (this.roles !== undefined && !this.roles.has(args.role)) {
      throw new SimError('C-CONTRACT-OUTPUT-ROLE', `The role ${args.role} is not declared.`, { role: args.role });
    }
    const output = this.outputs.get(args.role) ?? { chunks: [] };
    if (output.sealed !== undefined)
      throw new SimError('C-CONTRACT-OUTPUT-ROLE', `The role ${args.role} is already sealed.`, { role: args.role });
    this.pieces.push({
      role: args.role,
      bytes: bytes.length,
      encoding,
      final: args.final,
      ...(args.type === undefined ? {} : { type: args.type }),
      ...(args.label === undefined ? {} : { label: args.label }),
    });
    output.chunks.push(bytes);
    if (args.type !== undefined) output.type = args.type;
    if (args.label !== undefined) output.label = args.label;
    this.outputs.set(args.role, output);
    if (!args.final) return { role: args.role, bytes: bytes.length };
    const content = Buffer.concat(output.chunks);
    const id = this.newId();
    this.artifacts.set(id, {
      id,
      bytes: content,
      type: output.type ?? 'binary',
      compression: null,
      label: output.label ?? null,
      createdByRun: 'run_sim',
    });
    output.sealed = id;
    return {
      role: args.role,
      bytes: bytes.length,
      artifact_id: id,
      sha256: createHash('sha256').update(content).digest('hex'),
      size: content.length,
    };
  }
}

function errorText(code: string, message: string, details: Record<string, unknown> = {}, hint = '', abiVersion = 1): string {
  const known = (ERROR_CODES as Record<string, { hint: string }>)[code];
  return JSON.stringify({ status: 'error', abi_version: abiVersion, error: { code, message, details, hint: hint || known?.hint || '' } });
}
