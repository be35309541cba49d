// A container tool's argv, bound from its template and one call's validated input (ABI-CONTAINER-003,
// -004): each placeholder replaced by a parameter's value, an input artifact's path in /work/in or
// an output's path in /work/out, and nothing else. No shell ever reads the result, and a string
// value that could still be read as more than one value's worth (shell metacharacters, whitespace,
// control characters, a leading dash, an absolute path or a .. segment) is refused.
import { HelixError, PLACEHOLDER, PLACEHOLDER_BODY, type ContainerManifest } from '../../../abi/index.js';
import { WORKSPACE_MOUNT } from '../../../capabilities/docker-workspace.js';
import { outputFile } from '../loader/load-container.js';

/** What one call runs: argv, and the input artifacts to materialise in /work/in (named after their parameter). */
export interface BoundArgv {
  readonly argv: string[];
  readonly inputs: Array<{ name: string; artifact_id: string }>;
}

// A shell would read each of these; so might a tool that passes the value on to one.
const SHELL_META = /[;&|$`<>(){}[\]*?!~#'"\\\s]/;
// biome-ignore lint/suspicious/noControlCharactersInRegex: this pattern exists to find the control characters a value may not carry
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Binds `manifest.argv` to `input` (already valid against the input schema); throws I-REQ-CONTAINER-ARG for a value it refuses. */
export function bindArgv(manifest: ContainerManifest, input: Record<string, unknown>): BoundArgv {
  const inputs: Array<{ name: string; artifact_id: string }> = [];
  const argv = manifest.argv.map((entry) =>
    entry.replace(PLACEHOLDER, (_, body: string) => {
      // The loader checked every placeholder (ABI-CONTAINER-003): the body matches.
      const [, kind, name] = PLACEHOLDER_BODY.exec(body)! as unknown as [string, 'params' | 'inputs' | 'outputs', string];
      if (kind === 'outputs') return `${WORKSPACE_MOUNT}/out/${outputFile(manifest.declaredOutputs.find((o) => o.role === name)!)}`;
      const value = input[name];
      if (kind === 'inputs') {
        if (!inputs.some((i) => i.name === name)) inputs.push({ name, artifact_id: String(value) });
        return `${WORKSPACE_MOUNT}/in/${name}`;
      }
      if (typeof value !== 'string') return String(value);
      const why = refusal(value);
      if (why !== undefined) {
        throw new HelixError('I-REQ-CONTAINER-ARG', {
          message: `The value of ${name} for ${manifest.id}'s argv has ${why}; it is refused, never passed to the container.`,
          details: { pointer: `/${name}`, placeholder: `{{${body}}}`, reason: why },
        });
      }
      return value;
    }),
  );
  return { argv, inputs };
}

/** Why a string value is refused, or undefined. */
function refusal(value: string): string | undefined {
  if (CONTROL.test(value)) return 'a control character';
  if (SHELL_META.test(value)) return `a shell metacharacter or whitespace (${JSON.stringify(SHELL_META.exec(value)![0])})`;
  if (value.startsWith('-')) return 'a leading dash (it would read as an option)';
  if (value.startsWith('/')) return 'an absolute path';
  if (value.split('/').includes('..')) return 'a .. path segment';
  return undefined;
}
