// Shared pieces of the capability and secret checks (conformance/checks/capabilities.ts and
// secrets.ts): a helix/v1 WAT guest that sends any bytes the check chooses to capability_call or
// capability_call_bulk and hands back every raw answer (and the bulk buffer) hex-encoded, an
// extism/v1 plugin that forwards its input to helix_capability_call, the secret of the secret
// checks with every form of it to look for, and a tiny local HTTP upstream.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import path from 'node:path';
import type { ResponseEnvelope } from '../../abi/index.js';
import type { Call, CallerAnswer, CapabilityCaller } from '../engines/adapter.js';
import { CheckFailure } from '../expect.js';
import { extismWat } from './extism-wat.js';
import { abiPrelude, watString } from './guest-wat.js';

// ---------------------------------------------------------------------------------------------
// The raw caller: input {"h":"<hex of records>"}; each record is, little-endian u32s,
// kind (0 capability_call, 1 capability_call_bulk), buf_ptr, buf_len, fill (a byte the guest
// fills the buffer with first, or 0xffffffff for none), req_len, then req_len request bytes.
// Output {"hex":"..."}: per call, u32 answer length, the answer bytes, u32 dump length and, for a
// bulk call, the first min(buf_len, 4096) bytes of the buffer after the call.

const RAW_PREFIX = '{"status":"ok","output":{"hex":"';

/** Where a check's buffers may go in the raw caller's memory: above everything its allocator uses. */
export const RAW_BUFFER_BASE = 2 * 1024 * 1024;
/** The raw caller's memory: 96 pages (6 MiB), so a 4 MiB buffer fits above RAW_BUFFER_BASE. */
export const RAW_PAGES = 96;

/** The raw caller's WAT; with `bulk`, it imports capability_call_bulk too (needs capabilities.abiVersion 2). */
export function rawCallerModule(opts: { bulk?: boolean; extra?: string } = {}): string {
  const bulk = opts.bulk === true;
  return `(module
  (import "helix_v1" "capability_call" (func $cc (param i32 i32) (result i64)))
  ${bulk ? '(import "helix_v1" "capability_call_bulk" (func $ccb (param i32 i32 i32 i32) (result i64)))' : ''}
  ${abiPrelude({ pages: RAW_PAGES })}
  (data (i32.const 16) "${watString(RAW_PREFIX)}")
  (func $nib (param $c i32) (result i32)
    (if (result i32) (i32.le_u (local.get $c) (i32.const 57))
      (then (i32.sub (local.get $c) (i32.const 48)))
      (else (i32.sub (i32.or (local.get $c) (i32.const 32)) (i32.const 87)))))
  (func $hexch (param $n i32) (result i32)
    (if (result i32) (i32.lt_u (local.get $n) (i32.const 10))
      (then (i32.add (local.get $n) (i32.const 48)))
      (else (i32.add (local.get $n) (i32.const 87)))))
  ${opts.extra ?? ''}
  (func (export "execute") (param $ptr i32) (param $len i32) (result i64)
    (local $n i32) (local $raw i32) (local $i i32) (local $p i32) (local $end i32)
    (local $kind i32) (local $bp i32) (local $bl i32) (local $fill i32) (local $rl i32) (local $req i32)
    (local $packed i64) (local $a i32) (local $al i32) (local $dl i32) (local $blk i32) (local $cnt i32) (local $total i32)
    (local $out i32) (local $o i32) (local $k i32) (local $bptr i32) (local $blen i32) (local $b i32)
    (local.set $n (i32.shr_u (i32.sub (local.get $len) (i32.const 8)) (i32.const 1)))
    (local.set $raw (call $alloc (local.get $n)))
    (block $d (loop $l
      (br_if $d (i32.ge_u (local.get $i) (local.get $n)))
      (i32.store8 (i32.add (local.get $raw) (local.get $i))
        (i32.or
          (i32.shl (call $nib (i32.load8_u (i32.add (local.get $ptr) (i32.add (i32.const 6) (i32.shl (local.get $i) (i32.const 1)))))) (i32.const 4))
          (call $nib (i32.load8_u (i32.add (local.get $ptr) (i32.add (i32.const 7) (i32.shl (local.get $i) (i32.const 1))))))))
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br $l)))
    (local.set $p (local.get $raw))
    (local.set $end (i32.add (local.get $raw) (local.get $n)))
    (block $done (loop $rec
      (br_if $done (i32.ge_u (local.get $p) (local.get $end)))
      (local.set $kind (i32.load (local.get $p)))
      (local.set $bp (i32.load offset=4 (local.get $p)))
      (local.set $bl (i32.load offset=8 (local.get $p)))
      (local.set $fill (i32.load offset=12 (local.get $p)))
      (local.set $rl (i32.load offset=16 (local.get $p)))
      (local.set $req (i32.add (local.get $p) (i32.const 20)))
      (local.set $p (i32.add (local.get $req) (local.get $rl)))
      (if (i32.ne (local.get $fill) (i32.const -1)) (then (memory.fill (local.get $bp) (local.get $fill) (local.get $bl))))
      (if (i32.eqz (local.get $kind))
        (then (local.set $packed (call $cc (local.get $req) (local.get $rl))))
        (else ${bulk ? '(local.set $packed (call $ccb (local.get $req) (local.get $rl) (local.get $bp) (local.get $bl)))' : '(unreachable)'}))
      (local.set $a (i32.wrap_i64 (i64.shr_u (local.get $packed) (i64.const 32))))
      (local.set $al (i32.wrap_i64 (local.get $packed)))
      (local.set $dl (i32.const 0))
      (if (i32.ne (local.get $kind) (i32.const 0))
        (then (local.set $dl (select (local.get $bl) (i32.const 4096) (i32.le_u (local.get $bl) (i32.const 4096))))))
      (local.set $blk (call $alloc (i32.add (i32.const 8) (i32.add (local.get $al) (local.get $dl)))))
      (i32.store (local.get $blk) (local.get $al))
      (memory.copy (i32.add (local.get $blk) (i32.const 4)) (local.get $a) (local.get $al))
      (i32.store (i32.add (local.get $blk) (i32.add (i32.const 4) (local.get $al))) (local.get $dl))
      (memory.copy (i32.add (local.get $blk) (i32.add (i32.const 8) (local.get $al))) (local.get $bp) (local.get $dl))
      (i32.store (i32.add (i32.const 1024) (i32.shl (local.get $cnt) (i32.const 3))) (local.get $blk))
      (i32.store (i32.add (i32.const 1028) (i32.shl (local.get $cnt) (i32.const 3))) (i32.add (i32.const 8) (i32.add (local.get $al) (local.get $dl))))
      (local.set $total (i32.add (local.get $total) (i32.add (i32.const 8) (i32.add (local.get $al) (local.get $dl)))))
      (local.set $cnt (i32.add (local.get $cnt) (i32.const 1)))
      (br $rec)))
    (local.set $out (call $alloc (i32.add (i32.const ${RAW_PREFIX.length + 3}) (i32.shl (local.get $total) (i32.const 1)))))
    (memory.copy (local.get $out) (i32.const 16) (i32.const ${RAW_PREFIX.length}))
    (local.set $o (i32.add (local.get $out) (i32.const ${RAW_PREFIX.length})))
    (block $od (loop $ol
      (br_if $od (i32.ge_u (local.get $k) (local.get $cnt)))
      (local.set $bptr (i32.load (i32.add (i32.const 1024) (i32.shl (local.get $k) (i32.const 3)))))
      (local.set $blen (i32.load (i32.add (i32.const 1028) (i32.shl (local.get $k) (i32.const 3)))))
      (local.set $i (i32.const 0))
      (block $bd (loop $bloop
        (br_if $bd (i32.ge_u (local.get $i) (local.get $blen)))
        (local.set $b (i32.load8_u (i32.add (local.get $bptr) (local.get $i))))
        (i32.store8 (local.get $o) (call $hexch (i32.shr_u (local.get $b) (i32.const 4))))
        (i32.store8 offset=1 (local.get $o) (call $hexch (i32.and (local.get $b) (i32.const 15))))
        (local.set $o (i32.add (local.get $o) (i32.const 2)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $bloop)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br $ol)))
    (i32.store8 (local.get $o) (i32.const 34))
    (i32.store16 offset=1 (local.get $o) (i32.const 0x7d7d))
    (i64.or (i64.shl (i64.extend_i32_u (local.get $out)) (i64.const 32))
            (i64.extend_i32_u (i32.sub (i32.add (local.get $o) (i32.const 3)) (local.get $out))))))`;
}

/** One call of the raw caller: the request (an object is JSON-encoded; bytes are sent as they are). */
export interface RawCall {
  readonly request: unknown;
  /** Through capability_call_bulk with this buffer. */
  readonly bulk?: { readonly ptr: number; readonly len: number; readonly fill?: number };
}

/** The raw caller's input for `calls`. */
export function rawInput(calls: readonly RawCall[]): { h: string } {
  const parts: Buffer[] = [];
  for (const c of calls) {
    const req =
      c.request instanceof Uint8Array
        ? Buffer.from(c.request)
        : Buffer.from(typeof c.request === 'string' ? c.request : JSON.stringify(c.request));
    const head = Buffer.alloc(20);
    head.writeUInt32LE(c.bulk === undefined ? 0 : 1, 0);
    head.writeUInt32LE((c.bulk?.ptr ?? 0) >>> 0, 4);
    head.writeUInt32LE((c.bulk?.len ?? 0) >>> 0, 8);
    head.writeUInt32LE(c.bulk?.fill === undefined ? 0xffffffff : c.bulk.fill, 12);
    head.writeUInt32LE(req.length, 16);
    parts.push(head, req);
  }
  return { h: Buffer.concat(parts).toString('hex') };
}

/** One raw answer: its exact bytes, as text and parsed, and the buffer after a bulk call. */
export type RawAnswer = CallerAnswer;

/** The raw answers in a successful response of the raw caller. */
export function rawAnswers(r: ResponseEnvelope): RawAnswer[] {
  if (r.status !== 'success')
    throw new CheckFailure(`the raw caller did not succeed: ${r.status} ${r.error?.code ?? ''}: ${r.error?.message ?? ''}`);
  const all = Buffer.from(String((r.output as { hex?: unknown }).hex ?? ''), 'hex');
  const out: RawAnswer[] = [];
  for (let at = 0; at < all.length; ) {
    const n = all.readUInt32LE(at);
    const bytes = all.subarray(at + 4, at + 4 + n);
    const d = all.readUInt32LE(at + 4 + n);
    const dump = all.subarray(at + 8 + n, at + 8 + n + d);
    at += 8 + n + d;
    const text = bytes.toString('utf8');
    out.push({ bytes, text, json: JSON.parse(text), dump });
  }
  return out;
}

/** Sends `requests` through `caller`'s tool `tool` (as many calls as it needs) and gathers every answer and response, in order. */
export async function sendRequests(
  call: Call,
  caller: CapabilityCaller,
  tool: string,
  requests: readonly unknown[],
): Promise<{ answers: CallerAnswer[]; responses: ResponseEnvelope[] }> {
  const answers: CallerAnswer[] = [];
  const responses: ResponseEnvelope[] = [];
  for (let at = 0; at < requests.length; at += caller.perCall) {
    const r = await call(tool, caller.input(requests.slice(at, at + caller.perCall)));
    responses.push(r);
    answers.push(...caller.answers(r));
  }
  return { answers, responses };
}

/** Roomy limits for the AssemblyScript script guest (conformance/assembly/script.ts). */
export const SCRIPT_LIMITS = {
  maxInputBytes: 4_000_000,
  maxOutputBytes: 4_000_000,
  fuel: 5e9,
  maxMemoryPages: 1024,
  maxCapabilityCalls: 1000,
} as const;

/** A limits object roomy enough for the raw caller. */
export const RAW_LIMITS = {
  maxInputBytes: 1_000_000,
  maxOutputBytes: 4_000_000,
  fuel: 5_000_000_000,
  maxMemoryPages: 128,
  maxCapabilityCalls: 200,
} as const;

// ---------------------------------------------------------------------------------------------
// Extism: a plugin that sends its input (a request envelope) `times` times to helix_capability_call
// and outputs the last answer.

/** An extism/v1 plugin forwarding its input to the broker `times` times; its output is the last answer; `tail` runs before it returns. */
export function extismForwarder(times = 1, tail = ''): string {
  return extismWat(`
    (local $n i64) (local $req i64) (local $i i64) (local $resp i64) (local $k i32)
    (local.set $n (call $input_length))
    (local.set $req (call $alloc (local.get $n)))
    (block $done (loop $copy
      (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
      (call $store_u8 (i64.add (local.get $req) (local.get $i)) (call $input_load_u8 (local.get $i)))
      (local.set $i (i64.add (local.get $i) (i64.const 1)))
      (br $copy)))
    (loop $again
      (local.set $resp (call $cap (local.get $req)))
      (local.set $k (i32.add (local.get $k) (i32.const 1)))
      (br_if $again (i32.lt_u (local.get $k) (i32.const ${times}))))
    (call $output_set (local.get $resp) (call $length (local.get $resp)))
    ${tail}
    (i32.const 0)`);
}

// ---------------------------------------------------------------------------------------------
// Secrets.

/** A secret with characters every encoding treats differently: space, quotes, slash, plus, non-ASCII. */
export const SECRET = 'hunter2 "s3cr3t"/ä+Ω-Kb9~x';
export const SECRET_NAME = 'db_password';
export const MARKER = `[secret:${SECRET_NAME}]`;
export const SECRET_KEY_FILE = 'secret-hash.key';

/** The base64 characters fixed by the secret's bytes alone, when it starts `align` bytes into a group. */
function core(align: number, alphabet: 'base64' | 'base64url'): string {
  const bytes = Buffer.concat([Buffer.alloc(align, 0x41), Buffer.from(SECRET)]);
  const text = bytes.toString(alphabet);
  return text.slice(Math.ceil((8 * align) / 6), Math.floor((8 * bytes.length) / 6));
}

/** Every form of SECRET (ABI-SECRET-002) a stored or shown byte must never hold, by name. */
export const FORMS: ReadonlyArray<readonly [string, string]> = [
  ['raw', SECRET],
  ['json', JSON.stringify(SECRET).slice(1, -1)],
  [
    'json-ascii',
    JSON.stringify(SECRET)
      .slice(1, -1)
      .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
  ],
  ...[0, 1, 2].flatMap(
    (a) =>
      [
        [`base64@${a}`, core(a, 'base64')],
        [`base64url@${a}`, core(a, 'base64url')],
      ] as Array<[string, string]>,
  ),
  ['hex', Buffer.from(SECRET).toString('hex')],
  ['HEX', Buffer.from(SECRET).toString('hex').toUpperCase()],
  ['percent', encodeURIComponent(SECRET)],
  ['percent-lower', encodeURIComponent(SECRET).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())],
  ['form', new URLSearchParams({ v: SECRET }).toString().slice(2)],
];

/** The forms of the secret found in `bytes`. */
export function formsIn(bytes: Uint8Array | string): string[] {
  const buf = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  return FORMS.filter(([, text]) => buf.includes(Buffer.from(text))).map(([name]) => name);
}

/** The forms found in the name or the content of any file under `dir`, as `file: form`; and how many files were read. */
export function formsInTree(dir: string): { found: string[]; files: number; bytes: number } {
  const found: string[] = [];
  let files = 0;
  let bytes = 0;
  for (const name of readdirSync(dir, { recursive: true }) as string[]) {
    const file = path.join(dir, name);
    for (const form of formsIn(name)) found.push(`${name} (name): ${form}`);
    if (!statSync(file).isFile()) continue;
    const content = readFileSync(file);
    files += 1;
    bytes += content.length;
    for (const form of formsIn(content)) found.push(`${name}: ${form}`);
  }
  return { found, files, bytes };
}

/** Templates for conformance/assembly/secret-paths.ts, one per covered form and alignment. */
export const TEMPLATES: ReadonlyArray<readonly [string, string]> = [
  ['raw', '{{raw}}'],
  ['json', '{{json}}'],
  ['base64, aligned', '{{b64}}'],
  ['base64, one byte in', '{{b64|a}}'],
  ['base64, two bytes in, padded', '{{b64|ab}}'],
  ['base64, two bytes in, more after', '{{b64|ab|cdef}}'],
  ['base64url, aligned', '{{b64url}}'],
  ['base64url, one byte in', '{{b64url|a}}'],
  ['base64url, two bytes in', '{{b64url|ab}}'],
  ['basic auth', '{{b64|user:}}'],
  ['hex', '{{hex}}'],
  ['HEX', '{{HEX}}'],
  ['percent', '{{pct}}'],
];

// ---------------------------------------------------------------------------------------------
// A local upstream for http.request.

/** What reached the upstream. */
export interface Hit {
  readonly method: string;
  readonly url: string;
  readonly headers: IncomingMessage['headers'];
  readonly body: Buffer;
}

/** A local HTTP server on 127.0.0.1 answering with `answer(hit)`. */
export async function startUpstream(answer: (hit: Hit) => string): Promise<{ origin: string; hits: Hit[]; close(): Promise<void> }> {
  const hits: Hit[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const hit = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) };
      hits.push(hit);
      res.end(answer(hit));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the upstream has no port');
  return {
    origin: `http://127.0.0.1:${address.port}`,
    hits,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
