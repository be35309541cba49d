// Generates what must never be edited by hand: the error and capability tables in abi/ABI.md,
// the table of the policy's docker and slurm fields in README.md, and the JSON Schemas in
// abi/schemas/, all from abi/'s TypeScript. `--check` fails when they are stale.
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
  ContainerManifestSchema,
  CapabilityRequestSchema,
  CapabilityResponseSchema,
} from '../abi/index.js';
import { CAPABILITIES } from '../capabilities/index.js';
import { packageRoot } from '../host/1-base/paths.js';

/** Every generated file: path relative to the package root, and its content. */
export function generatedFiles(): Map<string, string> {
  const files = new Map<string, string>();
  const schemas: Record<string, z.ZodType> = {
    'tool-manifest': ToolManifestSchema,
    'container-manifest': ContainerManifestSchema,
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
  for (const cap of CAPABILITIES.values()) {
    for (const [part, schema] of [
      ['args', cap.args],
      ['result', cap.result],
    ] as const) {
      const json = z.toJSONSchema(schema as z.ZodType, { io: part === 'args' ? 'input' : 'output', unrepresentable: 'any' });
      files.set(
        `abi/schemas/capabilities/${cap.name}.${part}.json`,
        `${JSON.stringify({ ...json, $id: `https://helix.dev/abi/v1/capabilities/${cap.name}.${part}.json` }, null, 2)}\n`,
      );
    }
  }
  const abiMd = path.join(packageRoot(), 'abi', 'ABI.md');
  files.set('abi/ABI.md', withCapabilityTable(withErrorTable(readFileSync(abiMd, 'utf8'))));
  const readme = path.join(packageRoot(), 'README.md');
  files.set('README.md', replaceBetween(readFileSync(readme, 'utf8'), 'privileged-policy', privilegedPolicyTable()));
  return files;
}

interface JsonSchemaNode {
  readonly type?: string;
  readonly description?: string;
  readonly default?: unknown;
  readonly properties?: Record<string, JsonSchemaNode>;
  readonly additionalProperties?: JsonSchemaNode | boolean;
}

/** One row per field of the policy's docker and slurm sections: its path, what it allows, its default. */
function privilegedPolicyTable(): string {
  const policy = z.toJSONSchema(PolicySchema, { io: 'input', unrepresentable: 'any' }) as JsonSchemaNode;
  const rows = ['| field | what it allows | default |', '| --- | --- | --- |'];
  const walk = (node: JsonSchemaNode, at: string): void => {
    const record = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
    const leaf = node.properties === undefined && record?.properties === undefined;
    if (node.description !== undefined && (leaf || record !== undefined)) {
      const fallback =
        node.default === undefined || (typeof node.default === 'object' && node.default !== null && !Array.isArray(node.default))
          ? ''
          : `\`${JSON.stringify(node.default)}\``;
      rows.push(`| \`${at}\` | ${node.description.replace(/\|/g, '\\|')} | ${fallback} |`);
    }
    for (const [name, child] of Object.entries(node.properties ?? {})) walk(child, `${at}.${name}`);
    if (record?.properties !== undefined)
      for (const [name, child] of Object.entries(record.properties))
        walk(child, `${at}.<${at.endsWith('tools') ? 'tool id' : 'name'}>.${name}`);
  };
  for (const section of ['docker', 'slurm']) walk(policy.properties![section]!, section);
  return rows.join('\n');
}

function withCapabilityTable(md: string): string {
  const rows = ['| capability | what it does | scoped | privileged | journal |', '| --- | --- | --- | --- | --- |'];
  for (const cap of [...CAPABILITIES.values()].sort((a, b) => a.name.localeCompare(b.name))) {
    rows.push(
      `| \`${cap.name}\` | ${cap.description.replace(/\|/g, '\\|')} | ${cap.scopeOf === undefined ? 'no' : 'yes'} | ${cap.privileged ? 'yes' : 'no'} | ${cap.journal} |`,
    );
  }
  return replaceBetween(md, 'capabilities', rows.join('\n'));
}

function replaceBetween(md: string, marker: string, content: string): string {
  const begin = `<!-- ${marker}:begin -->`;
  const end = `<!-- ${marker}:end -->`;
  const i = md.indexOf(begin);
  const j = md.indexOf(end);
  if (i === -1 || j === -1) throw new Error(`the file lacks the ${marker}:begin/${marker}:end markers`);
  return `${md.slice(0, i + begin.length)}\n${content}\n${md.slice(j)}`;
}

function withErrorTable(md: string): string {
  const rows = ['| class | meaning | default status |', '| --- | --- | --- |'];
  for (const [cls, spec] of Object.entries(ERROR_CLASSES)) rows.push(`| \`${cls}\` | ${spec.meaning} | ${spec.status} |`);
  rows.push('', '| code | status | retryable | message | hint |', '| --- | --- | --- | --- | --- |');
  for (const [code, spec] of Object.entries(ERROR_CODES)) {
    const cell = (s: string) => s.replace(/\|/g, '\\|');
    rows.push(
      `| \`${code}\` | ${statusForCode(code)} | ${isRetryable(code) ? 'yes' : 'no'} | ${cell(spec.message)} | ${cell(spec.hint)} |`,
    );
  }
  return replaceBetween(md, 'errors', rows.join('\n'));
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
