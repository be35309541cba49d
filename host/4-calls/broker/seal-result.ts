// A run's result as the host may keep and show it once the run has received a secret: the
// policy's output rule applied, then every form of every secret redacted, then what the
// redaction could break (an error code, a message's length) made valid again (ABI-SECRET-006/007).
import { HelixError, type RunResult, statusForCode } from '../../../abi/index.js';
import { secretRefusal, type SecretGuard } from './secret-guard.js';

/** Longest error message or hint a run result holds (WireErrorSchema): markers may lengthen one. */
const MAX_TEXT = 4096;
const clip = (text: string): string => (text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT - 1)}…` : text);

/** `result` with the output rule applied and the run's secrets redacted. */
export function sealResult(guard: SecretGuard, result: RunResult): RunResult {
  if (!guard.active) return result;
  if (result.status === 'success' && guard.rules.output === 'refuse') {
    const hit = guard.findInJson(result.output, '/output');
    if (hit !== undefined) return { status: 'terminal_error', error: secretRefusal(hit, 'output', 'output').toWire(), warnings: [] };
  }
  const clean: RunResult = {
    ...result,
    ...(result.output === undefined ? {} : { output: guard.redactJson(result.output) }),
    ...(result.error === undefined ? {} : { error: guard.redactError(result.error) }),
    warnings: result.warnings.map((w) => guard.redactText(w)),
  };
  if (clean.error === undefined || result.error === undefined) return clean;
  // A guest's own error code that carried a secret is no longer a taxonomy code once redacted.
  if (clean.error.code !== result.error.code) {
    const hit = guard.findInText(result.error.code)!;
    const error = new HelixError('A-AUTH-SECRET-WRITE', {
      message: `The tool's error code carries the value of secret "${hit.secret}" (${hit.encoding}); it was withheld.`,
      details: { secret: hit.secret, encoding: hit.encoding, path: '/error/code', tool_message: clip(clean.error.message) },
    }).toWire();
    return { ...clean, status: statusForCode(error.code), error };
  }
  const { message, hint } = clean.error;
  return { ...clean, error: { ...clean.error, message: clip(message), ...(hint === undefined ? {} : { hint: clip(hint) }) } };
}
