// What the MCP checks share: `helix serve` over the check's plugins in a child process, a hostile
// line written and its reply read, what a clean JSON-RPC error looks like, the server's peak
// memory, a stream written in pieces, and a tool that spins.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { stringify } from 'yaml';
import { expect, type CheckContext } from '../../check.js';
import { startServer, type RawServer, type WireMessage } from '../../kit/c-cpu-proc.js';
import { abiPrelude } from '../../kit/guest-wat.js';
import { DEFAULT_LIMITS } from '../../kit/toolpack.js';
import { checkDefaultPolicy } from '../../runner.js';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
export const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

/** Bytes in a MiB. */
export const MiB = 1024 * 1024;
/** The canary's MCP name: an echo, called after every hostile frame. */
export const CANARY = 'conformance-canary';
/** The log levels of MCP's logging/setLevel, as an error lists them. */
export const LEVELS = 'debug, info, notice, warning, error, critical, alert, emergency';

/** `helix serve` over the check's plugins (its packs and the canary), the check's default policy and a home of its own. */
export async function serve(ctx: CheckContext, extra: readonly string[] = []): Promise<RawServer> {
  const policy = path.join(ctx.env.dir, 'serve.policy.yaml');
  writeFileSync(policy, stringify(checkDefaultPolicy(ctx.env)));
  const t0 = performance.now();
  const srv = await startServer(ctx, { toolpacks: await ctx.toolpacksDir(), policy, home: path.join(ctx.env.dir, 'serve-home'), extra });
  ctx.observe('server_start_ms', Math.round(performance.now() - t0));
  return srv;
}

/** Writes a hostile line; its reply: to `id`, or the next one with id null. */
export async function refused(srv: RawServer, line: string | Uint8Array, id: string | number | null): Promise<WireMessage> {
  const n = srv.nullReplies().length + 1;
  if (typeof line === 'string') srv.line(line);
  else srv.write(Buffer.concat([line, Buffer.from('\n')]));
  return id === null ? srv.nullReply(n) : srv.reply(id);
}

/** An error as a client should read it: words, once, no McpError prefix, no schema dump, no stack, at most 2,048 characters (ABI-MCP-007). */
export function expectClean(what: string, r: WireMessage): void {
  const message = r.error?.message ?? '';
  expect(message.length > 0, `${what}: the error has no message: ${show(r, 300)}`);
  expect(!/MCP error/.test(message), `${what}: the message carries the McpError prefix: ${message.slice(0, 200)}`);
  expect(
    !/"code":\s*"invalid_|"expected":|ZodError|\n\s+at /.test(message),
    `${what}: the message carries a schema dump or a stack: ${message.slice(0, 300)}`,
  );
  expect(message.length <= 2048, `${what}: the message is ${message.length} characters, over 2,048`);
}

/** Fails unless `r` is the JSON-RPC error `code` (and Helix code) with `id`, cleanly worded. */
export function expectError(
  what: string,
  r: WireMessage,
  id: string | number | null,
  code: number,
  helixCode?: string,
  message?: RegExp | string,
): void {
  expect(
    r.jsonrpc === '2.0' && r.id === id,
    `${what}: answered with id ${JSON.stringify(r.id)}, not ${JSON.stringify(id)}: ${show(r, 300)}`,
  );
  expect(r.error?.code === code, `${what}: answered ${show(r.error ?? r.result, 300)}, not error ${code}`);
  if (helixCode !== undefined)
    expect(r.error?.data?.code === helixCode, `${what}: data.code is ${String(r.error?.data?.code)}, not ${helixCode}`);
  if (message !== undefined) {
    const ok = typeof message === 'string' ? r.error!.message === message : message.test(r.error!.message);
    expect(ok, `${what}: the message is ${JSON.stringify(r.error!.message)}, not ${String(message)}`);
  }
  expectClean(what, r);
}

/** Peak resident memory of a process so far (VmHWM), in MiB. */
export function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m === null ? Number.NaN : Number(m[1]) / 1024;
}

/** Writes `bytes` to the server's stdin in `chunk`-sized pieces, waiting for drain (bounded). */
export async function stream(srv: RawServer, total: number, chunk: number, fill: string): Promise<void> {
  const stdin = srv.child.stdin!;
  const piece = Buffer.alloc(chunk, fill);
  for (let sent = 0; sent < total; sent += chunk) {
    const part = sent + chunk <= total ? piece : piece.subarray(0, total - sent);
    if (!stdin.write(part)) {
      await Promise.race([
        new Promise((r) => stdin.once('drain', r)),
        new Promise((_, reject) => setTimeout(() => reject(new Error('stdin did not drain within 20 s')), 20_000)),
      ]);
    }
  }
}

/** A tool that spins until its deadline: a call in flight to cancel or to stall behind. */
export const SPIN_PACK = {
  id: 'mcp.spin',
  module: `(module ${abiPrelude()} (func (export "execute") (param i32 i32) (result i64) (loop $l (br $l)) (i64.const 0)))`,
  manifest: { timeoutMs: 20_000, limits: { ...DEFAULT_LIMITS, fuel: 1_000_000_000_000 } },
};
