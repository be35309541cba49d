// io checks of size: an input one byte past maxInputBytes is refused before anything runs, and
// an output past maxOutputBytes before it is decoded (ABI-LIMIT-001).
import { expect, expectSuccess, type Check } from '../../check.js';
import { bytesInput } from '../../kit/io-guests.js';
import { expectGuestFault, expectRefused, IO_LIMITS, ioPack } from '../../kit/io-support.js';
import { BOTH, OPEN } from './shared.js';

/** The checks of this file, in the report's order. */
export const sizeChecks: readonly Check[] = [
  {
    id: 'io.oversize-input',
    title: 'An input one byte past maxInputBytes is refused before anything runs',
    category: 'io',
    abi: ['ABI-LIMIT-001', 'ABI-RESP-003'],
    engines: BOTH,
    expected:
      'invalid_request I-REQ-INPUT-SIZE with details.max_input_bytes 1024 and no run; an input of exactly 1024 bytes runs and comes back',
    packs: (engine) => [ioPack(engine, 'io.echo', engine.guests.echo(), { limits: { ...IO_LIMITS, maxInputBytes: 1024 } })],
    async run(ctx) {
      // {"s":"xxx…"} is 8 bytes around the string.
      const fits = { s: 'x'.repeat(1024 - 8) };
      const over = { s: 'x'.repeat(1024 - 7) };
      const big = { s: 'é'.repeat(600) }; // 1200 bytes of UTF-8 in 600 characters: the bound is in bytes
      const r = await ctx.call('io.echo', over);
      expectRefused(r, 'I-REQ-INPUT-SIZE', { max_input_bytes: 1024 });
      expectRefused(await ctx.call('io.echo', big), 'I-REQ-INPUT-SIZE');
      const ok = await ctx.call('io.echo', fits);
      expect(JSON.stringify(expectSuccess(ok)) === JSON.stringify(fits), 'the input of exactly 1024 bytes did not come back');
      ctx.observe('refused', r.error);
    },
  },
  {
    id: 'io.oversize-output',
    title: 'An output past maxOutputBytes is refused before it is decoded, however it is built',
    category: 'io',
    abi: ['ABI-LIMIT-001', 'ABI-EXTISM-007', 'ABI-OUTPUT-001'],
    engines: BOTH,
    expected:
      'terminal_error S-TOOL-OUTPUT-TOO-LARGE for 4 KiB of output (valid JSON, and bytes that are not even UTF-8) under maxOutputBytes 1024; the run is recorded failed',
    packs: (engine) => [
      ioPack(engine, 'io.bytes', engine.guests.bytes('output'), { limits: { ...IO_LIMITS, maxOutputBytes: 1024 } }, { outputSchema: OPEN }),
    ],
    async run(ctx) {
      const json = ctx.engine.output.answer(`{"s":"${'x'.repeat(4096)}"}`);
      const r = await ctx.call('io.bytes', bytesInput(json));
      await expectGuestFault(ctx, r, 'S-TOOL-OUTPUT-TOO-LARGE');
      // Not UTF-8 and too large: the size is checked first, so nothing is decoded.
      const junk = await ctx.call('io.bytes', bytesInput(new Uint8Array(4096).fill(0xff)));
      await expectGuestFault(ctx, junk, 'S-TOOL-OUTPUT-TOO-LARGE');
      ctx.observe('error', r.error);
    },
  },
];
