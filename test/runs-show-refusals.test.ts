// `helix runs show` lists the capability calls a run's broker refused, and why (ABI-RUNID-009),
// through the built CLI: a guest that sends one capability request of the test's choosing and
// succeeds whatever the answer, so a refusal would otherwise hide behind a green run.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ResponseEnvelopeSchema } from '../abi/index.js';
import { bytesInput, bytesRequestModule } from './helpers/bytes-guest-wat.js';
import { runCli } from './helpers/run-cli.js';
import { toolpacksDir, tempDir } from './helpers/toolpack.js';

let plugins: { dir: string; cleanup: () => void };
const home = tempDir('helix-home-');
beforeAll(async () => {
  plugins = await toolpacksDir([
    {
      id: 't.asker',
      module: bytesRequestModule(),
      manifest: { capabilities: { abiVersion: 1, allow: ['clock.now_unix', 'artifact.stat'] } },
    },
  ]);
}, 60_000);
afterAll(() => {
  plugins?.cleanup();
  home.cleanup();
});

/** Calls t.asker so that it sends `request`, then `helix runs show`s the run. */
async function askAndShow(request: string): Promise<{ shown: Record<string, unknown>; stderr: string }> {
  const called = await runCli(
    ['call', 't.asker', '--toolpacks', plugins.dir, '--home', home.dir, '--input', JSON.stringify(bytesInput(request))],
    home.dir,
  );
  const envelope = ResponseEnvelopeSchema.parse(JSON.parse(called.stdout));
  expect(envelope.status, called.stdout).toBe('success');
  const shown = await runCli(['runs', 'show', envelope.run_id!, '--home', home.dir], home.dir);
  expect(shown.code, shown.stderr).toBe(0);
  return { shown: JSON.parse(shown.stdout) as Record<string, unknown>, stderr: shown.stderr };
}

const envelope = (name: string, args: Record<string, unknown> = {}): string => JSON.stringify({ abi_version: 1, name, args });

describe('helix runs show', () => {
  it('lists a call of a capability the manifest does not allow: its name, A-AUTH-FORBIDDEN, the reason and what to do', async () => {
    const { shown, stderr } = await askAndShow(envelope('kv.get', { key: 'k' }));
    expect(shown).toMatchObject({ status: 'succeeded', journal: { entries: 1 } });
    expect(shown.refused_calls).toEqual([
      {
        seq: 0,
        capability: 'kv.get',
        decision: 'forbidden',
        code: 'A-AUTH-FORBIDDEN',
        reason: 'not in the manifest allowlist',
        hint: 'The code of t.asker calls kv.get, which its manifest does not allow: add kv.get to capabilities.allow (and grant it in the policy), or remove the call.',
      },
    ]);
    expect(stderr).toBe(
      'refused: call 0 kv.get: A-AUTH-FORBIDDEN, not in the manifest allowlist. The code of t.asker calls kv.get, which its manifest does not allow: add kv.get to capabilities.allow (and grant it in the policy), or remove the call.\n',
    );
  }, 60_000);

  it('names a scoped capability by the entry the manifest needs', async () => {
    const { shown } = await askAndShow(envelope('secrets.get', { name: 'token' }));
    expect(shown.refused_calls).toEqual([
      expect.objectContaining({
        capability: 'secrets.get',
        reason: 'not in the manifest allowlist',
        hint: expect.stringContaining('add a scoped entry such as secrets.get.<name> to capabilities.allow'),
      }),
    ]);
  }, 60_000);

  it('lists a capability the host does not have, and a request that is not an envelope', async () => {
    const unknown = await askAndShow(envelope('dns.lookup', { host: 'example.org' }));
    expect(unknown.shown.refused_calls).toEqual([
      expect.objectContaining({
        capability: 'dns.lookup',
        decision: 'forbidden',
        code: 'A-AUTH-FORBIDDEN',
        reason: 'unknown capability',
        hint: expect.stringContaining('README "Capabilities"'),
      }),
    ]);
    const malformed = await askAndShow('{"abi_version":1}');
    const reason = 'The capability request is malformed: name: Invalid input: expected string, received undefined';
    expect(malformed.shown.refused_calls).toEqual([
      expect.objectContaining({ seq: 0, capability: null, decision: 'invalid', code: 'I-REQ-ENVELOPE', reason }),
    ]);
    expect(malformed.stderr).toContain(`refused: call 0 (no capability name): I-REQ-ENVELOPE, ${reason}.`);
  }, 60_000);

  it('says which arguments of an allowed capability were refused', async () => {
    const { shown } = await askAndShow(envelope('artifact.stat', { id: 'art_00000000000000000000000000' }));
    expect(shown.refused_calls).toEqual([
      expect.objectContaining({
        capability: 'artifact.stat',
        decision: 'invalid',
        code: 'I-REQ-CAPABILITY-ARGS',
        reason: expect.stringMatching(/^The arguments of artifact\.stat have 2 violations: \/artifact_id: .+; \/: .+/),
      }),
    ]);
  }, 60_000);

  it('leaves out a call the capability itself answered with an error: it was allowed, not refused', async () => {
    const { shown, stderr } = await askAndShow(envelope('artifact.stat', { artifact_id: 'art_00000000000000000000000000' }));
    expect(shown).toMatchObject({ status: 'succeeded', journal: { entries: 1 }, refused_calls: [] });
    expect(stderr).toBe('');
  }, 60_000);

  it('lists nothing, and prints nothing on stderr, for a run whose calls were all answered', async () => {
    const { shown, stderr } = await askAndShow(envelope('clock.now_unix'));
    expect(shown).toMatchObject({ status: 'succeeded', journal: { entries: 1 }, refused_calls: [] });
    expect(stderr).toBe('');
    expect(Object.keys(shown).indexOf('refused_calls')).toBeLessThan(Object.keys(shown).indexOf('params'));
  }, 60_000);
});
