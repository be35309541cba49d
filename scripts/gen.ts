// Generates what must never be edited by hand: the error table in abi/ABI.md and the JSON
// Schemas in abi/schemas/, both from abi/'s TypeScript. `--check` fails when they are stale.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { z } from 'zod';
import {
  ERROR_CLASSES,
  ERROR_CODES,
  GuestOutputSchema,
  isRetryable,
  PolicySchema,
  RequestEnvelopeSchema,
  ResponseEnvelopeSchema,
  statusForCode,
  ToolManifestSchema,
  CapabilityRequestSchema,
  CapabilityResponseSchema,
} from '../abi/index.js';
import { packageRoot } from '../host/paths.js';

/** Every generated file: path relative to the package root, and its content. */
export function generatedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const schemas: Record<string, z.ZodType> = {
    'tool-manifest': ToolManifestSchema,
    policy: PolicySchema,
    'request-envelope': RequestEnvelopeSchema,
    'response-envelope': ResponseEnvelopeSchema,
    'guest-output': GuestOutputSchema,
    'capability-request': CapabilityRequestSchema,
    'capability-response': CapabilityResponseSchema,
  };
  for (const [name, schema] of Object.entries(schemas)) {
    const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
    files.set(`abi/schemas/${name}.json`, `${JSON.stringify({ ...json, $id: `https://helix.dev/abi/v1/${name}.json` }, null, 2)}\n`);
  }
  const abiMd = path.join(packageRoot(), 'abi', 'ABI.md');
  files.set('abi/ABI.md', withErrorTable(readFileSync(abiMd, 'utf8')));
  return files;
}

function withErrorTable(md: string): string {
  const rows = ['| class | meaning | default status |', '| --- | --- | --- |'];
  for (const [cls, spec] of Object.entries(ERROR_CLASSES)) rows.push(`| \`${cls}\` | ${spec.meaning} | ${spec.status} |`);
  rows.push('', '| code | status | retryable | message | hint |', '| --- | --- | --- | --- | --- |');
  for (const [code, spec] of Object.entries(ERROR_CODES)) {
    const cell = (s: string) => s.replace(/\|/g, '\\|');
    rows.push(`| \`${code}\` | ${statusForCode(code)} | ${isRetryable(code) ? 'yes' : 'no'} | ${cell(spec.message)} | ${cell(spec.hint)} |`);
  }
  const begin = '<!-- errors:begin -->';
  const end = '<!-- errors:end -->';
  const i = md.indexOf(begin);
  const j = md.indexOf(end);
  if (i === -1 || j === -1) throw new Error('abi/ABI.md lacks the errors:begin/errors:end markers');
  return `${md.slice(0, i + begin.length)}\n${rows.join('\n')}\n${md.slice(j)}`;
}

/** Writes the files (or, with check, reports the stale ones and exits 1). */
function main(check: boolean): void {
  const root = packageRoot();
  const stale: string[] = [];
  for (const [rel, content] of generatedFiles()) {
    const file = path.join(root, rel);
    let current: string | undefined;
    try {
      current = readFileSync(file, 'utf8');
    } catch {
      current = undefined;
    }
    if (current === content) continue;
    stale.push(rel);
    if (!check) {
      mkdirSync(path.dirname(file), { recursive: true });
      writeFileSync(file, content);
    }
  }
  if (check && stale.length > 0) {
    process.stderr.write(`stale generated files (run npm run gen): ${stale.join(', ')}\n`);
    process.exit(1);
  }
  process.stdout.write(stale.length === 0 ? 'generated files are current\n' : `wrote ${stale.join(', ')}\n`);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]).endsWith(path.join('scripts', 'gen.js'))) {
  main(process.argv.includes('--check'));
}
