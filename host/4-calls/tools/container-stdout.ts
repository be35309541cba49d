// How a container tool's stdout becomes its output (ABI-CONTAINER-006): `tsv`, a table whose first
// line names the columns ({ rows: [{ column: cell }] }, cells that are decimal numbers as numbers),
// `json`, one JSON object, or `none`. Text that does not read as the format fails the call with
// S-TOOL-CONTAINER-STDOUT; the object must pass the JSON bounds every output passes.
import { checkJsonValue, HelixError } from '../../../abi/index.js';

/** The output object of `stdout` read as `format`. */
export function readStdout(format: 'none' | 'tsv' | 'json', stdout: string, truncated: boolean): Record<string, unknown> {
  if (format === 'none') return {};
  if (truncated) throw unreadable("it was cut at the policy's docker.ceilings.maxStdoutBytes");
  const value = format === 'tsv' ? table(stdout) : json(stdout);
  const violation = checkJsonValue(value);
  if (violation !== undefined) throw unreadable(`at ${violation.pointer || '/'}: ${violation.problem}`);
  return value;
}

const DECIMAL = /^-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?$/;

function table(text: string): { rows: Array<Record<string, string | number>> } {
  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  if (lines.length === 0) throw unreadable('it is empty: a tsv table needs a header line');
  const header = lines[0]!.split('\t');
  const seen = new Set<string>();
  for (const name of header) {
    if (name === '' || name === '__proto__' || seen.has(name))
      throw unreadable(`the header names a column ${JSON.stringify(name)} that is empty, repeated or reserved`);
    seen.add(name);
  }
  const rows = lines.slice(1).map((line, i) => {
    const cells = line.split('\t');
    if (cells.length !== header.length) throw unreadable(`line ${i + 2} has ${cells.length} cells, the header ${header.length}`);
    return Object.fromEntries(header.map((name, j) => [name, cellValue(cells[j]!)]));
  });
  return { rows };
}

function cellValue(cell: string): string | number {
  if (!DECIMAL.test(cell)) return cell;
  const n = Number(cell);
  return Number.isFinite(n) && (Number.isSafeInteger(n) || !Number.isInteger(n)) ? n : cell;
}

function json(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw unreadable(`it is not JSON (${(err as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw unreadable('it is JSON but not an object');
  return value as Record<string, unknown>;
}

function unreadable(reason: string): HelixError {
  return new HelixError('S-TOOL-CONTAINER-STDOUT', {
    message: `The container tool's stdout cannot be read: ${reason}.`,
    details: { reason },
  });
}
