// File checks of what loading reads: only what belongs to the toolpack, reached without leaving it
// by a reference or a link, only regular files, and the same file it checked, even when swapped
// mid-load; each refusal names the reference as written and quotes nothing from outside.
import { execFileSync } from 'node:child_process';
import { symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { PolicySchema } from '../../../abi/index.js';
import { formatViolation } from '../../../host/1-base/files/violation.js';
import { loadToolpacks } from '../../../host/5-host/toolpacks.js';
import { CheckFailure, expect, type Check } from '../../check.js';
import { expectNoLeak, expectViolations, MARKER, outsideFile, swapper } from '../../kit/files-kit.js';
import { echoModule } from '../../kit/guest-wat.js';
import { writeToolpack } from '../../kit/toolpack.js';
import { markEnvironment } from './shared.js';

/** The checks of this file, in the report's order. */
export const referenceChecks: readonly Check[] = [
  {
    id: 'files.ref-traversal',
    title: '$refs and a module path that climb out of the toolpack or are absolute are refused without being opened',
    category: 'files',
    abi: ['ABI-FILE-001', 'ABI-FILE-013', 'ABI-LOAD-001'],
    engines: ['helix'],
    expected:
      'the host refuses to start with P-PRECOND-MANIFEST-INVALID listing every violation: ../ and absolute $refs (also one nested in a schema file) and a module path ../.. each named as written with ABI-FILE-001; no byte of outside.json, /etc/passwd or /proc/self/environ quoted',
    packs: () => [
      {
        id: 'files.refs',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: '../../outside.json' },
        outputSchema: {
          type: 'object',
          properties: { a: { $ref: '/etc/passwd' }, b: { $ref: '/proc/self/environ' }, c: { $ref: 'schemas/in.json' } },
        },
        extraFiles: { 'schemas/in.json': JSON.stringify({ type: 'object', properties: { x: { $ref: '../../../outside.json' } } }) },
      },
      { id: 'files.module_out', dirName: 'pack2', module: echoModule(), manifest: { module: '../../outside.wasm' } },
    ],
    async run(ctx) {
      markEnvironment(ctx);
      outsideFile(ctx);
      writeFileSync(path.join(ctx.env.dir, 'outside.wasm'), MARKER);
      const refusal = await ctx.refusedStart();
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /inputSchema\.\$ref: \$ref \.\.\/\.\.\/outside\.json leaves the toolpack directory.*\(ABI-FILE-001\)/,
        /outputSchema\.properties\.a\.\$ref: \$ref \/etc\/passwd is an absolute path.*\(ABI-FILE-001\)/,
        /outputSchema\.properties\.b\.\$ref: \$ref \/proc\/self\/environ is an absolute path/,
        /schemas\/in\.json:\d+: \/properties\/x\/\$ref: \$ref \.\.\/\.\.\/\.\.\/outside\.json leaves the toolpack directory/,
        /module: \.\.\/\.\.\/outside\.wasm leaves the toolpack directory/,
      ]);
      expect(lines.length === 5, `expected exactly the 5 violations, got ${lines.length}: ${JSON.stringify(lines)}`);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.symlink-escape',
    title: 'Symbolic links inside a toolpack that lead out of it (file, directory, /proc/self/environ, module) are refused',
    category: 'files',
    abi: ['ABI-FILE-002', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID with one ABI-FILE-002 violation per escaping link (a schema linked to a file outside, a schema reached through a linked directory, a schema linked to /proc/self/environ, a module linked outside); a link that stays inside the pack is followed without a violation; nothing outside is quoted',
    packs: () => [
      {
        id: 'files.links',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: {
          type: 'object',
          properties: { a: { $ref: 'schemas/link.json' }, b: { $ref: 'up/outside.json' }, c: { $ref: 'schemas/same.json' } },
        },
        outputSchema: { $ref: 'environ.json' },
        extraFiles: { 'schemas/real.json': JSON.stringify({ type: 'string' }) },
      },
      { id: 'files.linked_module', dirName: 'pack2', module: echoModule(), manifest: { module: 'link.wasm' } },
    ],
    async run(ctx) {
      markEnvironment(ctx);
      const outside = outsideFile(ctx);
      const plugins = await ctx.toolpacksDir();
      const pack = path.join(plugins, 'pack');
      symlinkSync(outside, path.join(pack, 'schemas', 'link.json'));
      symlinkSync(ctx.env.dir, path.join(pack, 'up'));
      symlinkSync('real.json', path.join(pack, 'schemas', 'same.json'));
      symlinkSync('/proc/self/environ', path.join(pack, 'environ.json'));
      writeFileSync(path.join(ctx.env.dir, 'outside.wasm'), MARKER);
      symlinkSync(path.join(ctx.env.dir, 'outside.wasm'), path.join(plugins, 'pack2', 'link.wasm'));
      const refusal = await ctx.refusedStart();
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /\$ref schemas\/link\.json resolves through a symbolic link to a place outside the toolpack directory.*\(ABI-FILE-002\)/,
        /\$ref up\/outside\.json resolves through a symbolic link.*\(ABI-FILE-002\)/,
        /\$ref environ\.json resolves through a symbolic link.*\(ABI-FILE-002\)/,
        /module: link\.wasm resolves through a symbolic link.*\(ABI-FILE-002\)/,
      ]);
      expect(!lines.some((l) => l.includes('same.json')), `the link inside the pack was refused: ${JSON.stringify(lines)}`);
      expect(lines.length === 4, `expected exactly 4 violations, got ${JSON.stringify(lines)}`);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.special-files',
    title: 'A FIFO, a device node and a directory named as schema or module are refused from their type, at once',
    category: 'files',
    abi: ['ABI-FILE-003'],
    engines: ['helix'],
    expected:
      'P-PRECOND-MANIFEST-INVALID naming a FIFO schema, a character-device schema (a /dev/zero node made inside the pack), a directory schema and a FIFO module, each "not a regular file"; the start is refused within 10 s (no FIFO waited on)',
    packs: () => [
      {
        id: 'files.special',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: 'pipe.json' },
        outputSchema: { type: 'object', properties: { z: { $ref: 'zero.json' }, d: { $ref: 'schemas' } } },
        extraFiles: { 'schemas/x.json': '{}' },
      },
      { id: 'files.fifo_module', dirName: 'pack2', module: echoModule(), manifest: { module: 'mod.wasm' } },
    ],
    async run(ctx) {
      const plugins = await ctx.toolpacksDir();
      const pack = path.join(plugins, 'pack');
      execFileSync('mkfifo', [path.join(pack, 'pipe.json')]);
      execFileSync('mkfifo', [path.join(plugins, 'pack2', 'mod.wasm')]);
      let device = true;
      try {
        execFileSync('mknod', [path.join(pack, 'zero.json'), 'c', '1', '5'], { stdio: 'ignore' });
      } catch {
        // Without CAP_MKNOD a device node cannot be made here: a link to /dev/zero stands in (refused as a link out, ABI-FILE-002).
        device = false;
        symlinkSync('/dev/zero', path.join(pack, 'zero.json'));
        ctx.note('mknod was refused: zero.json is a link to /dev/zero instead of a device node');
      }
      const t0 = performance.now();
      const refusal = await ctx.refusedStart();
      const ms = Math.round(performance.now() - t0);
      ctx.observe('refused_after_ms', ms);
      expect(ms < 10_000, `the refusal took ${ms} ms: something waited on a FIFO or read a device`);
      const lines = expectViolations(refusal, 'P-PRECOND-MANIFEST-INVALID', [
        /\$ref pipe\.json is a FIFO \(named pipe\), not a regular file \(ABI-FILE-003\)/,
        device ? /\$ref zero\.json is a character device, not a regular file/ : /\$ref zero\.json resolves through a symbolic link/,
        /\$ref schemas is a directory/,
        /module: mod\.wasm is a FIFO/,
      ]);
      ctx.observe('violations', lines);
    },
  },
  {
    id: 'files.swap-race',
    title: 'A schema file swapped back and forth with a link to a file outside, while hosts load the pack, is never read through the link',
    category: 'files',
    abi: ['ABI-FILE-004', 'ABI-FILE-002', 'ABI-FILE-013'],
    engines: ['helix'],
    expected:
      'over repeated loads while another process swaps schemas/in.json between a regular file and a link to outside.json: every load either bundles the inside schema or is refused with an ABI-FILE-002/-004 violation; no loaded schema and no refusal ever holds a byte of outside.json',
    async run(ctx) {
      const outside = outsideFile(ctx);
      const plugins = path.join(ctx.env.dir, 'race-plugins');
      const { manifestPath } = await writeToolpack(plugins, {
        id: 'files.race',
        dirName: 'pack',
        module: echoModule(),
        inputSchema: { $ref: 'in.json' },
      });
      const target = path.join(path.dirname(manifestPath), 'in.json');
      const inside = JSON.stringify({ type: 'object', title: 'inside', properties: { inside: { type: 'string' } } });
      writeFileSync(target, inside);
      const swap = swapper(target, inside, outside, 12_000);
      ctx.defer(() => swap.stop());
      const policy = PolicySchema.parse({ version: 1, tools: { allow: ['*'] } });
      const outcomes: Record<string, number> = { loaded: 0, refused_link: 0, refused_swapped: 0, refused_other: 0 };
      const others: string[] = [];
      // At least 3 s and 10 loads, at most 10 s: a busy machine loads slowly.
      const soft = Date.now() + 3000;
      const hard = Date.now() + 10_000;
      let loads = 0;
      while ((Date.now() < soft || loads < 10) && Date.now() < hard) {
        loads += 1;
        // The loader a host start runs (createHost's loadPluginsOrThrow), without a store to open each time.
        const result = await loadToolpacks(plugins, policy);
        const lines = result.violations.map(formatViolation);
        const seen = JSON.stringify(result.tools.map((t) => [t.inputSchema, t.outputSchema])) + lines.join('\n');
        if (seen.includes(MARKER)) throw new CheckFailure(`load ${loads} read the outside file: ${seen.slice(0, 600)}`);
        if (result.tools.length === 1 && lines.length === 0) outcomes.loaded! += 1;
        else if (lines.length === 1 && /ABI-FILE-002/.test(lines[0]!)) outcomes.refused_link! += 1;
        else if (lines.length === 1 && /ABI-FILE-004/.test(lines[0]!)) outcomes.refused_swapped! += 1;
        else {
          outcomes.refused_other! += 1;
          if (others.length < 5) others.push(lines.join(' | '));
        }
      }
      await swap.stop();
      ctx.observe('loads', loads);
      ctx.observe('outcomes', outcomes);
      if (others.length > 0) ctx.observe('other_refusals', others);
      expect(loads >= 5, `only ${loads} loads in 10 s`);
      expect(outcomes.refused_link! + outcomes.refused_swapped! > 0, 'the link was never seen: the race did not happen');
      for (const o of others) {
        expect(/does not exist|ABI-FILE-00[1-4]/.test(o), `a load ended in an unexpected refusal: ${o}`);
        expectNoLeak(o, 'a refusal during the race');
      }
    },
  },
];
