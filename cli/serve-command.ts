// `helix serve`: the MCP server on stdio. stdout carries nothing but the protocol; what it loaded,
// how to connect and any trouble go to stderr. Startup is fail-closed (exit 3 before any
// protocol traffic); stdin closing, SIGINT or SIGTERM stop it cleanly. A bad line never does.
import { fileURLToPath } from 'node:url';
import { InvalidArgumentError } from 'commander';
import { staleBuild } from '../host/6-faces/toolchain/source-stamp.js';
import type { Host } from '../host/5-host/host.js';
import { openHost } from './open-host.js';
import { startupBanner } from '../host/6-faces/mcp/banner.js';
import { createMcpServer, type HelixMcpServer } from '../host/6-faces/mcp/server.js';
import { checkMaxMessageBytes } from '../host/6-faces/mcp/stdio-transport.js';
import type { WasmTool } from '../host/5-host/toolpacks.js';
import { EXIT, printError } from './output.js';

/** Options of `helix serve`. */
export interface ServeOptions {
  /** --toolpacks (or its former name --plugins). */
  readonly toolpacks?: string;
  readonly policy?: string;
  readonly home?: string;
  readonly progressIntervalMs?: number;
  readonly maxMessageBytes?: number;
}

/** Longest line of the log on stderr; a client's bad line can be long, its log line is not. */
const MAX_LOG_CHARS = 1000;

/** Parses `--max-message-bytes`, naming the option and its range in the error. */
export function maxMessageBytesOption(value: string): number {
  try {
    return checkMaxMessageBytes(/^\d+$/.test(value) ? Number(value) : value, '--max-message-bytes');
  } catch (err) {
    throw new InvalidArgumentError((err as Error).message);
  }
}

/** Writes one line of the server's log on stderr, cut to a readable length. */
function logLine(text: string): void {
  const line = text.replace(/\s*\n\s*/g, ' ');
  process.stderr.write(
    `helix serve: ${line.length <= MAX_LOG_CHARS ? line : `${line.slice(0, MAX_LOG_CHARS)}… [${line.length - MAX_LOG_CHARS} more characters]`}\n`,
  );
}

/** How long a stopped server waits for the client to read what is left of its output. */
const FLUSH_GRACE_MS = 2000;

/**
 * Output a client never reads would keep the process alive for ever after it stopped: the client
 * gets a grace period to read it, and then it is dropped and the process exits.
 */
async function flushOrDrop(): Promise<void> {
  const stdout = process.stdout;
  if (stdout.writableLength === 0) return;
  const drained = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), FLUSH_GRACE_MS);
    stdout.once('drain', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
  if (drained) return;
  logLine(`the client left ${stdout.writableLength} bytes of output unread; dropped`);
  process.exit(process.exitCode ?? EXIT.ok);
}

/** Keeps stray console output of any library off stdout, where it would corrupt the protocol. */
function consoleToStderr(): void {
  const toStderr = (...args: unknown[]): void => console.error(...args);
  console.log = toStderr;
  console.info = toStderr;
  console.debug = toStderr;
}

/** Loads the host and the MCP tool table; on failure prints why and sets exit code 3. */
async function start(opts: ServeOptions): Promise<{ host: Host; mcp: HelixMcpServer } | undefined> {
  let host: Host;
  try {
    // A home without a store gets one only once the toolpacks and policy have loaded.
    host = await openHost(opts);
  } catch (err) {
    printError(err);
    process.exitCode = EXIT.startup;
    return undefined;
  }
  try {
    return { host, mcp: createMcpServer(host, { maxMessageBytes: opts.maxMessageBytes }) };
  } catch (err) {
    printError(err);
    await host.close();
    process.exitCode = EXIT.startup;
    return undefined;
  }
}

/** Runs `helix serve` until stdin closes or a signal stops it. */
export async function serveCommand(opts: ServeOptions): Promise<void> {
  consoleToStderr();
  const started = await start(opts);
  if (started === undefined) return;
  const { host, mcp } = started;
  // A server compiles every module in the background (ABI-LOAD-008), so that a first call need
  // not wait for it; a module the engine refuses fails its calls (P-PRECOND-MODULE-REFUSED).
  for (const tool of host.tools()) if (tool.kind === 'wasm') (tool as WasmTool).loaded.module.prepare().catch(() => undefined);
  const extraArgs = [
    ...(opts.progressIntervalMs === undefined ? [] : ['--progress-interval-ms', String(opts.progressIntervalMs)]),
    ...(opts.maxMessageBytes === undefined ? [] : ['--max-message-bytes', String(opts.maxMessageBytes)]),
  ];
  const cliPath = fileURLToPath(new URL('./main.js', import.meta.url));
  process.stderr.write(
    startupBanner(host, mcp.tools, {
      cliPath,
      toolpacks: opts.toolpacks,
      policy: opts.policy,
      extraArgs,
      maxMessageBytes: mcp.maxMessageBytes,
    }),
  );
  // An agent would otherwise call a module older than the sources the author is looking at.
  for (const tool of host.tools()) {
    const stale = tool.kind === 'wasm' ? staleBuild((tool as WasmTool).loaded) : undefined;
    if (stale !== undefined) logLine(stale);
  }
  if (process.stdin.isTTY) {
    process.stderr.write(
      `stdin is a terminal: this server waits for an MCP client. Register it with one (above), or try it with\n  npx @modelcontextprotocol/inspector node ${cliPath} serve\nCtrl-C or Ctrl-D stops it.\n`,
    );
  }

  let stopping: Promise<void> | undefined;
  const stop = (why: string): Promise<void> => {
    // Closing the connection aborts every request in flight, so their runs are cancelled and
    // recorded as failed (R-TIMEOUT-CANCELLED); the host then drains them and closes the store.
    if (stopping !== undefined) return stopping;
    // Deferred a tick: closing the connection calls back into stop, which must see it started.
    stopping = Promise.resolve().then(async () => {
      process.stderr.write(`helix serve: ${why}; stopping\n`);
      try {
        await mcp.close();
        await host.close();
        process.stderr.write('helix serve: stopped\n');
        await flushOrDrop();
      } catch (err) {
        printError(err);
        process.exitCode = EXIT.failed;
      }
    });
    return stopping;
  };
  for (const [signal, code] of [
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const) {
    process.on(signal, () => {
      // A second signal while stopping: the person wants out now.
      if (stopping !== undefined) process.exit(code);
      void stop(`${signal} received`);
    });
  }
  process.stdin.once('end', () => void stop('stdin closed'));
  // A client that dies without closing our stdin first leaves a broken pipe on stdout.
  process.stdout.on('error', (err) => void stop(`stdout failed (${err.message})`));
  // Refused lines, dropped notifications and the SDK's own complaints: logged, never fatal.
  mcp.server.onerror = (err) => logLine(err.message);
  mcp.server.onclose = () => void stop('connection closed');
  await mcp.connectStdio({ log: logLine });
}
