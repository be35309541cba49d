// Compiles a test guest written in AssemblyScript against the guest SDK (its shared asconfig),
// so broker and capability tests drive a real module rather than a simulation.
import asc from 'assemblyscript/asc';
import path from 'node:path';
import { packageRoot } from '../../host/paths.js';

/** Compiles `file` (under test/fixtures/guests) and returns the module bytes. */
export async function compileGuest(file: string): Promise<Uint8Array> {
  const sdk = path.join(packageRoot(), 'sdk-guest', 'assemblyscript');
  const entry = path.relative(sdk, path.join(packageRoot(), 'test', 'fixtures', 'guests', file));
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const result = await asc.main([entry, '--config', 'asconfig.json', '--baseDir', sdk, '--outFile', 'guest.wasm', '--noColors'], {
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
    },
    stdout: { write: () => true } as never,
    stderr: { write: (text: string) => (stderr.push(String(text)), true) } as never,
  });
  if (result.error || binary === undefined) throw new Error(`asc failed for ${file}:\n${stderr.join('')}`);
  return binary;
}
