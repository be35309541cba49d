// Capability checks of the bulk import's rules (ABI-BULK-001..003): it needs capability ABI 2,
// keeps every rule of a text call, serves only artifact.read and artifact.write, and refuses a
// buffer outside memory or above 4 MiB before the broker sees it.
import { randomBytes } from 'node:crypto';
import { errorAnswer, FORBIDDEN } from '../../../host/5-host/inspection.js';
import { expect, expectOutcome, type Check } from '../../check.js';
import { RAW_BUFFER_BASE, rawAnswers, rawCallerModule, rawInput, type RawCall } from '../../kit/caps-kit.js';
import { capabilityAudit, MiB, raw, stored } from './shared.js';

/** The checks of this file, in the report's order. */
export const bulkRuleChecks: readonly Check[] = [
  // ---- the bulk path --------------------------------------------------------------------------
  {
    id: 'capabilities.bulk-import-needs-abi-2',
    title: 'A module importing capability_call_bulk under capabilities.abiVersion 1 is refused at load',
    category: 'capabilities',
    abi: ['ABI-BULK-001'],
    engines: ['helix'],
    expected: 'the host refuses to start with P-PRECOND-MANIFEST-INVALID naming capability_call_bulk',
    packs: () => [{ ...raw('cap.bulk_v1', ['artifact.read']), module: rawCallerModule({ bulk: true }) }],
    async run(ctx) {
      const refusal = await ctx.refusedStart();
      expect(refusal.code === 'P-PRECOND-MANIFEST-INVALID', `refused with ${refusal.code}`);
      const text = JSON.stringify(refusal.details);
      expect(text.includes('capability_call_bulk'), `the refusal does not name the import: ${text.slice(0, 500)}`);
      ctx.observe('violations', refusal.details.violations);
    },
  },
  {
    id: 'capabilities.bulk-rules',
    title:
      'The bulk import keeps every rule of a capability call: allowlist, argument schema and call ceiling, answering with abi_version 2',
    category: 'capabilities',
    abi: ['ABI-BULK-001'],
    engines: ['helix'],
    expected:
      'a bulk artifact.write from a tool allowlisting only artifact.read gets exactly the forbidden error with abi_version 2; an unknown name through the bulk import is answered I-REQ-BULK-CAPABILITY (only the two bulk names pass); a read with an `encoding` argument gets I-REQ-CAPABILITY-ARGS; a good read gets abi_version 2; a tool with maxCapabilityCalls 3 making 5 bulk reads ends R-CAP-CALL-LIMIT',
    packs: () => [
      raw('cap.bulk', ['artifact.read'], { bulk: true }),
      raw('cap.bulk_few', ['artifact.read'], { bulk: true, limits: { maxCapabilityCalls: 3 } }),
    ],
    async run(ctx) {
      const id = await stored(ctx, new Uint8Array(randomBytes(100)));
      const buf = { ptr: RAW_BUFFER_BASE, len: 64 };
      const calls: RawCall[] = [
        { request: { abi_version: 2, name: 'artifact.write', args: { role: 'x' } }, bulk: buf },
        { request: { abi_version: 2, name: 'no.such_bulk', args: {} }, bulk: buf },
        { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, encoding: 'base64' } }, bulk: buf },
        { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: buf },
      ];
      const a = rawAnswers(await ctx.call('cap.bulk', rawInput(calls)));
      expect(Buffer.compare(a[0]!.bytes, Buffer.from(errorAnswer(FORBIDDEN, 2))) === 0, `the unlisted write was answered ${a[0]!.text}`);
      expect(
        a[1]!.json.error?.code === 'I-REQ-BULK-CAPABILITY' && a[1]!.json.abi_version === 2,
        `an unknown name was answered ${a[1]!.text}`,
      );
      expect(a[2]!.json.error?.code === 'I-REQ-CAPABILITY-ARGS' && a[2]!.json.abi_version === 2, `encoding was answered ${a[2]!.text}`);
      expect(
        a[3]!.json.status === 'ok' && a[3]!.json.abi_version === 2 && a[3]!.json.capability_result!.result.bytes === 64,
        `the read was answered ${a[3]!.text}`,
      );
      ctx.observe(
        'answers',
        a.map((x) => x.text.slice(0, 200)),
      );
      const read = { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id, length: 8 } }, bulk: buf };
      const storm = await ctx.call('cap.bulk_few', rawInput([read, read, read, read, read]));
      expectOutcome(storm, 'terminal_error', 'R-CAP-CALL-LIMIT');
    },
  },
  {
    id: 'capabilities.bulk-not-bulk-name',
    title:
      'A capability other than artifact.read/write through capability_call_bulk is answered I-REQ-BULK-CAPABILITY, and the guest goes on',
    category: 'capabilities',
    abi: ['ABI-BULK-002'],
    engines: ['helix'],
    expected:
      'clock.now_unix and kv.get (both allowlisted) through the bulk import are answered I-REQ-BULK-CAPABILITY with abi_version 2; the buffer is left untouched; a bulk artifact.read after them is answered ok',
    packs: () => [raw('cap.bulk', ['artifact.read', 'clock.now_unix', 'kv.get'], { bulk: true })],
    async run(ctx) {
      const id = await stored(ctx, new Uint8Array(randomBytes(32)));
      const buf = { ptr: RAW_BUFFER_BASE, len: 32, fill: 0x5a };
      const a = rawAnswers(
        await ctx.call(
          'cap.bulk',
          rawInput([
            { request: { abi_version: 2, name: 'clock.now_unix', args: {} }, bulk: buf },
            { request: { abi_version: 2, name: 'kv.get', args: { key: 'k' } }, bulk: buf },
            { request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: { ptr: RAW_BUFFER_BASE, len: 32 } },
          ]),
        ),
      );
      for (const i of [0, 1]) {
        expect(a[i]!.json.error?.code === 'I-REQ-BULK-CAPABILITY' && a[i]!.json.abi_version === 2, `answer ${i}: ${a[i]!.text}`);
        expect(
          a[i]!.dump.every((b) => b === 0x5a),
          `the buffer was written by a refused bulk call: ${a[i]!.dump.toString('hex')}`,
        );
      }
      expect(a[2]!.json.status === 'ok', `the read after them was answered ${a[2]!.text}`);
      ctx.observe('message', a[0]!.json.error!.message);
    },
  },
  {
    id: 'capabilities.bulk-bad-buffer',
    title: 'A bulk buffer outside memory, wrapping past 2^32, or above 4 MiB ends the call before the broker sees it',
    category: 'capabilities',
    abi: ['ABI-BULK-003'],
    engines: ['helix'],
    expected:
      'buffer at the end of memory running past it and one wrapping past 2^32 end terminal_error S-TOOL-BAD-POINTER; a 4 MiB + 1 buffer ends S-TOOL-BULK-BUFFER; none leaves a journal entry or an audit record',
    packs: () => [raw('cap.bulk', ['artifact.read'], { bulk: true })],
    async run(ctx) {
      const host = await ctx.host();
      const id = await stored(ctx, new Uint8Array(16));
      const cases: Array<[string, number, number, string]> = [
        ['past the end of memory', 96 * 65536 - 8, 16, 'S-TOOL-BAD-POINTER'],
        ['wrapping past 2^32', 0xfffffff0, 0x20, 'S-TOOL-BAD-POINTER'],
        ['above BULK_MAX_PIECE', RAW_BUFFER_BASE, 4 * MiB + 1, 'S-TOOL-BULK-BUFFER'],
      ];
      for (const [what, ptr, len, code] of cases) {
        const r = await ctx.call(
          'cap.bulk',
          rawInput([{ request: { abi_version: 2, name: 'artifact.read', args: { artifact_id: id } }, bulk: { ptr, len } }]),
        );
        expectOutcome(r, 'terminal_error', code);
        if (r.run_id !== undefined && r.run_id !== null) {
          expect(host.runs.journal(r.run_id).length === 0, `${what}: the call was journaled`);
          expect(capabilityAudit(host, r.run_id).length === 0, `${what}: the call was audited`);
        }
        ctx.observe(what, { code: r.error!.code, details: r.error!.details });
      }
    },
  },
];
