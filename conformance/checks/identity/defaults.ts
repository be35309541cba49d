// Canonical params: the input schema's defaults are filled in before the run's identity and
// before the guest (ABI-RUNID-010), so one request in meaning is one run.
import { expect, expectSuccess, type Check } from '../../check.js';
import { echoModule } from '../../kit/guest-wat.js';

/** An input schema whose `bin_width` defaults to 10, and `options.flag`, inside a defaulted object, to false. */
const DEFAULTED = {
  type: 'object',
  required: ['q'],
  properties: {
    q: { type: 'string' },
    bin_width: { type: 'integer', default: 10 },
    options: { type: 'object', default: {}, properties: { flag: { type: 'boolean', default: false } } },
  },
};

/** JSON text with object keys sorted, so two values compare by content whatever their key order. */
function sortedJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(sortedJson).join(',')}]`;
  if (typeof v === 'object' && v !== null) {
    const entries = Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${sortedJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v);
}

/** The checks of this file, in the report's order. */
export const defaultChecks: readonly Check[] = [
  {
    id: 'identity.defaults-canonical',
    title: 'A field the input schema defaults is the same run left out or spelled out, and the guest reads the default',
    category: 'identity',
    abi: ['ABI-RUNID-010', 'ABI-RUNID-001'],
    engines: ['helix'],
    expected:
      'an echo guest called with {"q":"a"} answers {"q":"a","bin_width":10,"options":{"flag":false}}; the call spelling those values replays the same run_id; bin_width 11 is a new run; the run records the filled-in input in params.input',
    packs: () => [{ id: 'identity.defaulted', module: echoModule(), inputSchema: DEFAULTED }],
    async run(ctx) {
      const canonical = { q: 'a', bin_width: 10, options: { flag: false } };
      const left = await ctx.call('identity.defaulted', { q: 'a' });
      expectSuccess(left);
      ctx.observe('guest read', left.output);
      expect(sortedJson(left.output) === sortedJson(canonical), `the guest read ${JSON.stringify(left.output)}`);
      const spelled = await ctx.call('identity.defaulted', { options: { flag: false }, bin_width: 10, q: 'a' });
      ctx.observe('run_ids', { left_out: left.run_id, spelled_out: spelled.run_id, replayed: spelled.replayed });
      expect(
        spelled.run_id === left.run_id && spelled.replayed === true,
        `spelled out: run ${spelled.run_id}, not a replay of ${left.run_id}`,
      );
      const other = await ctx.call('identity.defaulted', { q: 'a', bin_width: 11 });
      expectSuccess(other);
      expect(other.run_id !== left.run_id, 'another bin_width replayed the defaulted run');
      const params = (await ctx.host()).runs.show(left.run_id!).params as { input?: unknown };
      expect(sortedJson(params.input) === sortedJson(canonical), `params.input is ${JSON.stringify(params.input)}`);
    },
  },
];
