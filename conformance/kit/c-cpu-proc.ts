// Child processes for the cpu, isolation and mcp checks: the built CLI run to its end under a
// bound, and `helix serve` as a raw JSON-RPC peer over stdio (write any bytes, read replies by id,
// every wait bounded, the child killed when the check ends).
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { packageRoot } from '../../host/1-base/paths.js';
import { CheckFailure, type CheckContext } from '../check.js';

/** A value as JSON for a message, cut to `n` characters (undefined shown as such). */
const show = (v: unknown, n: number): string => String(JSON.stringify(v)).slice(0, n);

/** The built CLI entry point. */
export function cliPath(): string {
  return path.join(packageRoot(), 'dist', 'cli', 'main.js');
}

/** How a CLI process ended. */
export interface CliExit {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `helix ...args` with HELIX_HOME `home` to its end; killed (and the check failed) after `timeoutMs`. */
export function runCli(ctx: CheckContext, args: readonly string[], home: string, timeoutMs = 30_000): Promise<CliExit> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [cliPath(), ...args], {
      cwd: ctx.env.dir,
      env: { ...process.env, HELIX_HOME: home },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    ctx.defer(() => void (child.exitCode === null && child.signalCode === null && child.kill('SIGKILL')));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString('utf8')));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString('utf8')));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new CheckFailure(`helix ${args.join(' ')} did not end within ${timeoutMs} ms; stderr: ${stderr.slice(-500)}`));
    }, timeoutMs);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** One JSON-RPC message the server wrote. */
export interface WireMessage {
  readonly jsonrpc?: string;
  readonly id?: string | number | null;
  readonly method?: string;
  readonly params?: Record<string, unknown>;
  readonly result?: Record<string, unknown>;
  readonly error?: { code: number; message: string; data?: Record<string, unknown> };
}

/** A `helix serve` child spoken to raw. */
export interface RawServer {
  readonly child: ChildProcess;
  stderr(): string;
  /** Writes bytes to stdin as they are (no newline added). */
  write(bytes: string | Uint8Array): void;
  /** Writes `text` and a newline. */
  line(text: string, eol?: string): void;
  /** Every message on stdout so far. */
  messages(): WireMessage[];
  /** The reply to request `id`, once it came (CheckFailure after `timeoutMs`). */
  reply(id: string | number, timeoutMs?: number): Promise<WireMessage>;
  /** The replies with id null so far. */
  nullReplies(): WireMessage[];
  /** Waits for the `n`th reply with id null (counting from 1). */
  nullReply(n: number, timeoutMs?: number): Promise<WireMessage>;
  /** Sends request `method` with a fresh numeric id; its reply. */
  request(method: string, params?: unknown, timeoutMs?: number): Promise<WireMessage>;
  /** A good tools/call of `tool` on the same server; fails the check unless it answers with its arguments. */
  served(tool: string): Promise<void>;
  /** The server still running (no exit). */
  alive(): boolean;
}

const INITIALIZE = { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'helix-conformance', version: '1' } };

/**
 * Starts `helix serve --plugins <dir> --policy <file> ...extra` with HELIX_HOME `home`, waits for
 * it to be ready (bounded), initializes it; the child is killed when the check ends.
 */
export async function startServer(
  ctx: CheckContext,
  opts: { toolpacks: string; policy: string; home: string; extra?: readonly string[]; readyMs?: number },
): Promise<RawServer> {
  const args = [cliPath(), 'serve', '--toolpacks', opts.toolpacks, '--policy', opts.policy, ...(opts.extra ?? [])];
  const child = spawn(process.execPath, args, {
    cwd: ctx.env.dir,
    env: { ...process.env, HELIX_HOME: opts.home },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  ctx.defer(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.stdin?.end();
    const ended = await Promise.race([
      new Promise<boolean>((r) => child.once('exit', () => r(true))),
      new Promise<boolean>((r) => setTimeout(() => r(false), 3000)),
    ]);
    if (!ended) child.kill('SIGKILL');
  });
  child.stdin!.on('error', () => undefined);
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString('utf8')));
  let parsed: WireMessage[] = [];
  let consumed = 0;
  const messages = (): WireMessage[] => {
    const end = out.lastIndexOf('\n') + 1;
    if (end > consumed) {
      const lines = out
        .slice(consumed, end)
        .split('\n')
        .filter((l) => l.trim() !== '');
      for (const l of lines) {
        try {
          parsed.push(JSON.parse(l) as WireMessage);
        } catch {
          throw new CheckFailure(`the server wrote a line on stdout that is not JSON: ${l.slice(0, 200)}`);
        }
      }
      parsed = [...parsed];
      consumed = end;
    }
    return parsed;
  };
  const alive = (): boolean => child.exitCode === null && child.signalCode === null;
  const until = async <T>(what: string, probe: () => T | undefined, timeoutMs: number): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const v = probe();
      if (v !== undefined) return v;
      if (!alive())
        throw new CheckFailure(
          `the server exited (${child.exitCode ?? child.signalCode}) while waiting for ${what}; stderr: ${err.slice(-800)}`,
        );
      if (Date.now() > deadline) throw new CheckFailure(`no ${what} within ${timeoutMs} ms; stderr: ${err.slice(-800)}`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const isReply = (m: WireMessage): boolean => m.method === undefined && (m.result !== undefined || m.error !== undefined);
  const nullReplies = (): WireMessage[] => messages().filter((m) => isReply(m) && m.id === null);
  let next = 1;
  const server: RawServer = {
    child,
    stderr: () => err,
    write: (bytes) => void child.stdin!.write(bytes),
    line: (text, eol = '\n') => void child.stdin!.write(`${text}${eol}`),
    messages,
    reply: (id, timeoutMs = 15_000) =>
      until(`reply to id ${JSON.stringify(id)}`, () => messages().find((m) => isReply(m) && m.id === id), timeoutMs),
    nullReplies,
    nullReply: (n, timeoutMs = 15_000) => until(`reply number ${n} with id null`, () => nullReplies()[n - 1], timeoutMs),
    request(method, params, timeoutMs) {
      const id = next++;
      server.line(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
      return server.reply(id, timeoutMs);
    },
    async served(tool) {
      const probe = { probe: next, at: Date.now() };
      const r = await server.request('tools/call', { name: tool, arguments: probe });
      const sc = r.result?.structuredContent as Record<string, unknown> | undefined;
      if (r.error !== undefined || r.result?.isError === true || JSON.stringify(sc) !== JSON.stringify(probe)) {
        throw new CheckFailure(`the server did not serve a good tools/call afterwards: ${show(r, 500)}`);
      }
    },
    alive,
  };
  await until('"Ready." on stderr', () => (/^Ready\./m.test(err) ? true : undefined), opts.readyMs ?? 60_000);
  const init = await server.request('initialize', INITIALIZE);
  if (init.result === undefined) throw new CheckFailure(`initialize failed: ${JSON.stringify(init)}`);
  server.line('{"jsonrpc":"2.0","method":"notifications/initialized"}');
  return server;
}
