import { describe, expect, it } from 'vitest';
import { PolicySchema, ToolManifestSchema } from '../../../abi/index.js';
import {
  callLimits,
  capabilityPatternMatches,
  isCapabilityGranted,
  isToolAllowed,
  toolLimits,
  toolPatternMatches,
  ungrantedCapabilities,
} from './rules.js';

const policy = PolicySchema.parse({
  version: 1,
  tools: { allow: ['seq.*', 'vcf.summary'] },
  grants: { '*': ['log.*', 'docker.*'], 'seq.*': ['kv.get'], 'vcf.summary': ['docker.run'] },
  ceilings: { fuel: 1000, maxMemoryPages: 32, timeoutMs: 10_000, maxOutputBytes: 500 },
});

const manifest = ToolManifestSchema.parse({
  id: 'seq.gc_content',
  version: '1.0.0',
  contractVersion: 'v1',
  description: 'x',
  abi: 'helix/v1',
  module: 'm.wasm',
  digest: `sha256:${'0'.repeat(64)}`,
  deterministic: 'pure',
  timeoutMs: 20_000,
  limits: { maxInputBytes: 100, maxOutputBytes: 1000, fuel: 500 },
  capabilities: { abiVersion: 1, allow: ['kv.get', 'kv.put', 'log.emit'] },
  inputSchema: { type: 'object' },
  outputSchema: {},
});

describe('policy rules', () => {
  it('match tool patterns exactly, by prefix, or all', () => {
    expect(toolPatternMatches('*', 'a.b')).toBe(true);
    expect(toolPatternMatches('seq.*', 'seq.stats')).toBe(true);
    expect(toolPatternMatches('seq.*', 'seqx.stats')).toBe(false);
    expect(toolPatternMatches('seq.stats', 'seq.stats_v2')).toBe(false);
    expect(isToolAllowed(policy, 'seq.gc_content')).toBe(true);
    expect(isToolAllowed(policy, 'fastq.filter')).toBe(false);
  });

  it('never let a wildcard grant a privileged capability', () => {
    expect(capabilityPatternMatches('log.*', 'log.emit')).toBe(true);
    expect(capabilityPatternMatches('docker.*', 'docker.run')).toBe(false);
    expect(isCapabilityGranted(policy, 'seq.gc_content', 'docker.run')).toBe(false);
    expect(isCapabilityGranted(policy, 'vcf.summary', 'docker.run')).toBe(true);
  });

  it('report the capabilities a manifest asks for and the policy does not grant', () => {
    expect(ungrantedCapabilities(policy, manifest.id, manifest.capabilities.allow)).toEqual(['kv.put']);
  });

  it('cap every manifest limit by the policy ceiling', () => {
    const l = toolLimits(policy, manifest);
    expect(l.fuel).toBe(500);
    expect(l.timeoutMs).toBe(10_000);
    expect(l.maxOutputBytes).toBe(500);
    expect(l.maxMemoryPages).toBe(32);
  });

  it('let a request narrow limits but never widen them', () => {
    const l = toolLimits(policy, manifest);
    expect(callLimits(l, { timeoutMs: 50_000 }, 0).timeoutMs).toBe(10_000);
    expect(callLimits(l, { timeoutMs: 300 }, 0).timeoutMs).toBe(300);
    expect(callLimits(l, { deadlineUnixMs: 1_250 }, 1_000).timeoutMs).toBe(250);
    expect(callLimits(l, { memoryMbLimit: 1 }, 0).maxMemoryPages).toBe(16);
    expect(callLimits(l, { memoryMbLimit: 1024 }, 0).maxMemoryPages).toBe(32);
  });
});
