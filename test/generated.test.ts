// Generated files (JSON Schemas from zod, the error table in ABI.md) must match their sources.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../host/1-base/paths.js';
import { generatedFiles } from '../scripts/gen.js';

describe('generated files', () => {
  it.each([...generatedFiles()])('%s is current (npm run gen rewrites it)', (rel, content) => {
    expect(readFileSync(path.join(packageRoot(), rel), 'utf8')).toBe(content);
  });

  it('ABI.md cites every host error code and every ABI id used in host messages exists in it', () => {
    const md = readFileSync(path.join(packageRoot(), 'abi', 'ABI.md'), 'utf8');
    const ids = new Set(md.match(/\*\*(ABI-[A-Z]+-\d{3})\*\*/g)?.map((s) => s.slice(2, -2)));
    const sources = [
      'host/2-sandbox/modules/module-pipeline.ts',
      'host/2-sandbox/modules/module-rules.ts',
      'abi/errors.ts',
      'host/2-sandbox/engine/sandbox.ts',
    ]
      .map((f) => readFileSync(path.join(packageRoot(), f), 'utf8'))
      .join('\n');
    const cited = new Set(sources.match(/ABI-[A-Z]+-\d{3}/g));
    for (const id of cited) expect(ids.has(id), `${id} is cited in code but not defined in ABI.md`).toBe(true);
  });
});
