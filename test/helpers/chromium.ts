// Debian's headless Chromium for the tests that open a page as a reviewer would: the DOM after
// the page's scripts ran, and a screenshot. Each run gets a profile of its own and a bound.
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const BOUND_MS = 120_000;

function chromium(args: readonly string[]): Promise<{ stdout: string; stderr: string }> {
  const profile = mkdtempSync(path.join(tmpdir(), 'helix-chromium-'));
  return new Promise((resolve, reject) => {
    execFile(
      'chromium',
      ['--headless', '--no-sandbox', '--disable-gpu', '--hide-scrollbars', '--no-first-run', `--user-data-dir=${profile}`, ...args],
      { timeout: BOUND_MS, maxBuffer: 256 * 1024 * 1024 },
      (err, stdout, stderr) => {
        rmSync(profile, { recursive: true, force: true });
        if (err) reject(new Error(`chromium ${args.join(' ')} failed: ${err.message}\n${stderr}`));
        else resolve({ stdout, stderr });
      },
    );
  });
}

/** The page's DOM, serialized after its scripts ran. */
export async function renderedDom(file: string): Promise<string> {
  return (await chromium(['--dump-dom', pathToFileURL(file).href])).stdout;
}

/** A PNG screenshot of the page at `width`×`height` into `png`. */
export async function screenshot(file: string, png: string, width = 1280, height = 2400): Promise<void> {
  await chromium([`--window-size=${width},${height}`, `--screenshot=${png}`, pathToFileURL(file).href]);
}
