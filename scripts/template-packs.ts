// Packs as an author makes them, for the scripts that measure the templates: `helix new` in a
// language, then `helix build` in the pack, through the built CLI in a child process; and a call
// of such a pack's tool on an artifact, measured (scripts/measured-cli.ts).
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { packageRoot } from '../host/1-base/paths.js';
import { type MeasuredRun, runMeasuredCli } from './measured-cli.js';

const run = promisify(execFile);
const CLI = path.join(packageRoot(), 'dist', 'cli', 'main.js');

/** The languages `helix new --lang` offers. */
export const TEMPLATE_LANGUAGES = ['as', 'c', 'extism'] as const;
export type TemplateLanguage = (typeof TEMPLATE_LANGUAGES)[number];

/** Runs `helix ...args` in `cwd` and returns its stdout; throws with its output when it fails. */
export async function helix(args: readonly string[], cwd: string): Promise<string> {
  try {
    return (await run(process.execPath, [CLI, ...args], { cwd, maxBuffer: 64 << 20 })).stdout;
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    throw new Error(`helix ${args.join(' ')} failed (exit ${e.code}): ${e.stdout ?? ''}${e.stderr ?? ''}`.slice(0, 4000));
  }
}

/** A made and built pack: its folder and its tool's id. */
export interface TemplatePack {
  readonly lang: TemplateLanguage;
  readonly dir: string;
  readonly toolId: string;
}

/** `helix new tpl-<lang> --lang <lang>` in `parent`, then `helix build` in it: the tool is `tpl.<lang>`. */
export async function makeTemplatePack(parent: string, lang: TemplateLanguage): Promise<TemplatePack> {
  await helix(['new', `tpl-${lang}`, '--lang', lang], parent);
  const dir = path.join(parent, `tpl-${lang}`);
  await helix(['build'], dir);
  return { lang, dir, toolId: `tpl.${lang}` };
}

/** A template tool's successful call on an artifact, measured. */
export interface TemplateCall {
  readonly run: MeasuredRun;
  readonly output: Record<string, unknown>;
  readonly metrics: { duration_ms: number; fuel_used: number; memory_peak_pages: number };
}

/** Calls the pack's tool on artifact `id` in `home` (cwd `cwd`, the default policy); throws with the envelope unless it succeeds. */
export async function callTemplate(pack: TemplatePack, id: string, home: string, cwd: string): Promise<TemplateCall> {
  const r = await runMeasuredCli(
    ['call', pack.toolId, '--toolpacks', pack.dir, '--input', JSON.stringify({ sequences: id }), '--compact', '--home', home],
    cwd,
  );
  const envelope = JSON.parse(r.stdout || '{}') as { status?: string; output?: Record<string, unknown>; metrics?: TemplateCall['metrics'] };
  if (envelope.status !== 'success')
    throw new Error(`${pack.toolId} failed (exit ${r.code}): ${r.stdout.slice(0, 2000)}${r.stderr.slice(0, 2000)}`);
  return { run: r, output: envelope.output!, metrics: envelope.metrics! };
}
