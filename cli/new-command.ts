// `helix new NAME`: creates a toolpack from a template in sdk-guest/templates/<lang>/ (with
// --bare, <lang>-bare/: the skeleton without the worked example). Every file of the template is copied; in contents and in file names `__NAME__` becomes the pack's
// directory name, `__ID__` the tool id and `__DESCRIPTION__` the description. The description is
// free text, so outside Markdown files it is written JSON-escaped: templates put it between
// double quotes, where it is valid in JSON, in YAML and in C.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { HelixError, TOOL_ID_PATTERN } from '../abi/index.js';
import { packageRoot } from '../host/1-base/paths.js';
import { displayPath } from './build-command.js';
import { EXIT, printError } from './output.js';

import { TEMPLATE_LANGS, type TemplateLang } from './exit-codes.js';

export { TEMPLATE_LANGS, type TemplateLang };

const LANG_NAMES: Record<TemplateLang, string> = { as: 'AssemblyScript', c: 'C', extism: 'Extism' };

/**
 * What every template's tool does, as its manifest says it when --description is not given: a
 * sentence about the tool, never about its id, so it reads right whatever the pack is called.
 */
export const DEFAULT_DESCRIPTION =
  'Counts the records of a FASTA or FASTQ artifact (plain or gzip) and their total length, and writes the id and length of each record as a TSV artifact.';

/** What every bare skeleton's tool does, as its manifest says it when --description is not given. */
export const BARE_DESCRIPTION = 'Counts the bytes and lines of a text artifact (plain or gzip).';

/**
 * The `.gitignore` of every new pack. It is written here rather than kept in the templates,
 * because npm leaves files named `.gitignore` out of a packed tarball. The module in `build/` is
 * not ignored: the manifest's digest names it, and a pack is shipped with it.
 */
export const PACK_GITIGNORE = [
  '# The store of the runs and artifacts helix test, call and dev make here (./.helix unless --home or HELIX_HOME)',
  '.helix/',
  '# Packages installed next to the pack',
  'node_modules/',
  '',
].join('\n');

/** Options of `helix new`. */
export interface NewOptions {
  readonly lang: TemplateLang;
  readonly id?: string;
  readonly dir: string;
  readonly description?: string;
  /** The bare skeleton (sdk-guest/templates/<lang>-bare): one handler that counts an artifact's bytes and lines. */
  readonly bare?: boolean;
}

/** A pack directory name: letters and digits, single `-` or `_` between them. */
export const TOOLPACK_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9]*(?:[-_][A-Za-z0-9]+)*$/;
const MAX_NAME_LENGTH = 64;
// The manifest schema's limit.
const MAX_DESCRIPTION_LENGTH = 2000;

/**
 * The tool id a pack name gives when --id is not passed: lowercase, the first `-` a dot (the
 * group, as the bundled `seq-gc-content` is `seq.gc_content`), the other `-` underscores.
 */
export function defaultToolId(name: string): string {
  return name.toLowerCase().replace('-', '.').replace(/-/g, '_');
}

/** Runs `helix new`. */
export function newCommand(name: string, opts: NewOptions): void {
  try {
    const created = createToolpack(name, opts);
    printNextSteps(created);
  } catch (err) {
    if (err instanceof TemplateMissingError) process.stderr.write(`helix: ${err.message}\nhint: reinstall Helix, or use another --lang\n`);
    else printError(err);
    process.exitCode = err instanceof HelixError && err.code.startsWith('I-REQ-') ? EXIT.invalid : EXIT.failed;
  }
}

/** The installation lacks the template: not the caller's fault, so not a taxonomy error. */
class TemplateMissingError extends Error {
  override readonly name = 'TemplateMissingError';
}

/** What `helix new` made. */
export interface CreatedToolpack {
  readonly dir: string;
  readonly id: string;
  readonly lang: TemplateLang;
  readonly bare: boolean;
  /** Files written, relative to `dir`, sorted. */
  readonly files: string[];
}

/** Checks the arguments and copies the template; throws HelixError (I-REQ-*) on a bad argument. */
export function createToolpack(name: string, opts: NewOptions): CreatedToolpack {
  if (!TOOLPACK_NAME_PATTERN.test(name) || name.length > MAX_NAME_LENGTH) {
    throw new HelixError('I-REQ-TOOLPACK-NAME', {
      message: `The toolpack name "${name}" cannot be used: it names the directory and the manifest and module files, so it must start with a letter and use only letters, digits and single - or _ between them (at most ${MAX_NAME_LENGTH} characters).`,
      details: { name },
    });
  }
  const id = opts.id ?? defaultToolId(name);
  if (!TOOL_ID_PATTERN.test(id)) {
    throw new HelixError('I-REQ-TOOL-ID', {
      message:
        opts.id === undefined
          ? `The name "${name}" gives the tool id "${id}", which is not dotted lowercase segments each starting with a letter.`
          : `The tool id "${id}" is not dotted lowercase segments each starting with a letter.`,
      hint:
        opts.id === undefined
          ? `Pass --id, e.g. --id ${/^[a-z]/.test(id) ? `my.${id.replace(/[^a-z0-9_]/g, '_')}` : 'my.tool'}, or name the pack GROUP-NAME (hello-tool gives hello.tool).`
          : 'Use lowercase segments joined by dots, each starting with a letter, e.g. --id seq.my_tool.',
      details: { id, name },
    });
  }
  const description = (opts.description ?? (opts.bare === true ? BARE_DESCRIPTION : DEFAULT_DESCRIPTION)).replace(/\s+/g, ' ').trim();
  if (description.length === 0 || description.length > MAX_DESCRIPTION_LENGTH) {
    throw new HelixError('I-REQ-TOO-LARGE', {
      message: `The description has ${description.length} characters; a manifest's description has 1 to ${MAX_DESCRIPTION_LENGTH}.`,
      hint: 'Pass a shorter --description: agents read it to choose the tool, so one or two sentences.',
      details: { length: description.length, max: MAX_DESCRIPTION_LENGTH },
    });
  }
  const target = path.resolve(opts.dir, name);
  if (existsSync(target) && (!statSync(target).isDirectory() || readdirSync(target).length > 0)) {
    throw new HelixError('I-REQ-TARGET-NOT-EMPTY', {
      message: `${target} already exists and ${statSync(target).isDirectory() ? 'is not empty' : 'is not a directory'}; helix new never overwrites.`,
      details: { target },
    });
  }
  const bare = opts.bare === true;
  const template = path.join(packageRoot(), 'sdk-guest', 'templates', bare ? `${opts.lang}-bare` : opts.lang);
  if (!existsSync(template))
    throw new TemplateMissingError(
      `the ${LANG_NAMES[opts.lang]}${bare ? ' bare' : ''} template is missing from this Helix installation: ${template}`,
    );

  const replace = (text: string, markdown: boolean): string =>
    text
      .replaceAll('__NAME__', name)
      .replaceAll('__ID__', id)
      .replaceAll('__DESCRIPTION__', markdown ? description : JSON.stringify(description).slice(1, -1));
  const files: string[] = [];
  const existed = existsSync(target);
  try {
    copyTree(template, target, '', (relative, bytes) => {
      const out = replace(relative, true);
      // Text is substituted; a binary file (a NUL byte) is copied as it is.
      const contents = bytes.includes(0) ? bytes : replace(bytes.toString('utf8'), relative.endsWith('.md'));
      mkdirSync(path.dirname(path.join(target, out)), { recursive: true });
      writeFileSync(path.join(target, out), contents, { flag: 'wx' });
      files.push(out);
    });
    writeFileSync(path.join(target, '.gitignore'), PACK_GITIGNORE, { flag: 'wx' });
    files.push('.gitignore');
  } catch (err) {
    // Leave nothing half made behind.
    if (existed) for (const entry of readdirSync(target)) rmSync(path.join(target, entry), { recursive: true, force: true });
    else rmSync(target, { recursive: true, force: true });
    throw err;
  }
  return { dir: target, id, lang: opts.lang, bare, files: files.sort() };
}

function copyTree(root: string, target: string, relative: string, write: (relative: string, bytes: Buffer) => void): void {
  mkdirSync(path.join(target, relative), { recursive: true });
  for (const entry of readdirSync(path.join(root, relative), { withFileTypes: true })) {
    const child = path.join(relative, entry.name);
    if (entry.isDirectory()) copyTree(root, target, child, write);
    else if (entry.isFile()) write(child, readFileSync(path.join(root, child)));
  }
}

// The example call uses the first fixture that expects success: a `"@data/FILE"` input is
// imported first, as the guide's walkthrough does, and its id shown as `art_...`.
function printNextSteps(created: CreatedToolpack): void {
  const where = displayPath(created.dir);
  const out = (line = '') => process.stdout.write(`${line}\n`);
  out(`created ${where}/ (${LANG_NAMES[created.lang]} ${created.bare ? 'bare skeleton' : 'template'}, tool ${created.id})`);
  for (const file of created.files) out(`  ${file}`);
  out();
  out('next:');
  out(`  cd ${where}`);
  out('  helix build        # compile, write the module digest into the manifest');
  out('  helix test         # run fixtures/*.json through the real host');
  const example = exampleCall(created.dir);
  if (example?.data !== undefined) out(`  helix artifact import ${example.data}    # prints the artifact id`);
  out(`  helix call ${created.id} --toolpacks .${example === undefined ? " --input '{...}'" : ` --input '${example.input}'`}`);
}

/** The input of the first success fixture, with a data file in it replaced by `art_...`. */
export function exampleCall(dir: string): { input: string; data?: string } | undefined {
  const fixtures = path.join(dir, 'fixtures');
  if (!existsSync(fixtures)) return undefined;
  for (const file of readdirSync(fixtures)
    .filter((f) => f.endsWith('.json'))
    .sort()) {
    try {
      const fx = JSON.parse(readFileSync(path.join(fixtures, file), 'utf8')) as {
        input?: Record<string, unknown>;
        expect?: { output?: unknown };
      };
      if (fx.expect?.output === undefined || typeof fx.input !== 'object' || fx.input === null) continue;
      const data = Object.values(fx.input).filter((v): v is string => typeof v === 'string' && v.startsWith('@data/'));
      // One file: its import is one line to show.
      if (data.length > 1) continue;
      const input = Object.fromEntries(Object.entries(fx.input).map(([k, v]) => [k, v === data[0] ? 'art_...' : v]));
      const text = JSON.stringify(input);
      if (text.includes("'")) continue;
      return data.length === 0 ? { input: text } : { input: text, data: data[0]!.slice(1) };
    } catch {
      // A fixture the author has not finished is no example; try the next.
    }
  }
  return undefined;
}
