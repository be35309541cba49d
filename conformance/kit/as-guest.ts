// Compiles a guest written in AssemblyScript (conformance/assembly/) against the shipped guest
// SDK and its shared asconfig, so capability checks and tests drive a real module.
import asc from 'assemblyscript/asc';
import path from 'node:path';
import { packageRoot } from '../../host/1-base/paths.js';

const built = new Map<string, Promise<Uint8Array>>();

/** Compiles `file` (a name under conformance/assembly) once per process; returns the module bytes. */
export function compileGuest(file: string): Promise<Uint8Array> {
  let bytes = built.get(file);
  if (bytes === undefined) {
    bytes = compile(file);
    built.set(file, bytes);
    bytes.catch(() => built.delete(file));
  }
  return bytes;
}

/** The AssemblyScript source of a guest, for a report. */
export function guestSourcePath(file: string): string {
  return path.join(packageRoot(), 'conformance', 'assembly', file);
}

async function compile(file: string): Promise<Uint8Array> {
  const sdk = path.join(packageRoot(), 'sdk-guest', 'assemblyscript');
  const entry = path.relative(sdk, guestSourcePath(file));
  let binary: Uint8Array | undefined;
  const stderr: string[] = [];
  const result = await asc.main([entry, '--config', 'asconfig.json', '--baseDir', sdk, '--outFile', 'guest.wasm', '--noColors'], {
    writeFile: (name: string, contents: Uint8Array | string) => {
      if (name.endsWith('.wasm') && typeof contents !== 'string') binary = contents;
    },
    stdout: { write: () => true } as never,
    stderr: {
      write: (text: string) => {
        stderr.push(String(text));
        return true;
      },
    } as never,
  });
  if (result.error || binary === undefined) throw new Error(`asc failed for ${file}:\n${stderr.join('')}`);
  return binary;
}
