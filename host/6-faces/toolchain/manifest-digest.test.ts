// Unit tests of the manifest digest edit: in place, comment-preserving, and refusing anything
// that would change more than the digest.

import { describe, expect, it } from 'vitest';
import { moduleDigest, readManifestFields, withDigest } from './manifest-digest.js';

const DIGEST_A = `sha256:${'a'.repeat(64)}`;
const DIGEST_B = `sha256:${'b'.repeat(64)}`;

const MANIFEST = `# what this pack is for
id: seq.demo          # stable forever
version: 1.0.0
abi: helix/v1
module: build/demo.wasm
entrypoint: execute
digest: ${DIGEST_A}   # written by the build
limits:
  fuel: 1000   # instructions
declaredOutputs: []
`;

describe('withDigest', () => {
  it('replaces the digest value in place and leaves every other byte alone', () => {
    const result = withDigest(MANIFEST, DIGEST_B, 'demo.tool.yaml');
    expect(result.changed).toBe(true);
    expect(result.text).toBe(MANIFEST.replace(DIGEST_A, DIGEST_B));
  });

  it('reports no change and returns the same text when the digest already matches', () => {
    expect(withDigest(MANIFEST, DIGEST_A, 'demo.tool.yaml')).toEqual({ text: MANIFEST, changed: false });
  });

  it('inserts a missing digest right after entrypoint, keeping comments and order', () => {
    const without = MANIFEST.replace(/^digest:.*\n/m, '');
    const result = withDigest(without, DIGEST_B, 'demo.tool.yaml');
    const lines = result.text.split('\n');
    expect(lines[lines.findIndex((line) => line.startsWith('entrypoint:')) + 1]).toBe(`digest: ${DIGEST_B}`);
    expect(result.text).toContain('# what this pack is for');
    expect(result.text).toContain('# stable forever');
    expect(result.text).toContain('# instructions');
  });

  it('fills an empty digest field', () => {
    const empty = MANIFEST.replace(/^digest:.*$/m, 'digest:');
    const result = withDigest(empty, DIGEST_B, 'demo.tool.yaml');
    expect(readManifestFields(result.text, 'demo.tool.yaml').digest).toBe(DIGEST_B);
    expect(result.text).toBe(MANIFEST.replace(/^digest:.*$/m, `digest: ${DIGEST_B}`));
  });

  // Formatting the YAML library would rewrite if it printed the document: flow collections with
  // their own spacing, quotes, a line longer than 80 characters, a blank line, CR LF line ends.
  const STYLED = [
    '# a pack written by hand',
    'id:   seq.styled',
    "version: '1.0.0'",
    'description: "A description long enough that a YAML printer would fold it over more than one line of text."',
    '',
    'abi: helix/v1',
    'module: build/styled.wasm   # the module',
    'capabilities: { allow: [ clock.now_unix ] }',
    'limits: {fuel: 1000, timeoutMs: 500}',
    '',
  ].join('\n');

  it('writes a missing digest as one new line after module, and changes no other byte', () => {
    const result = withDigest(STYLED, DIGEST_B, 'styled.tool.yaml');
    expect(result.text).toBe(STYLED.replace('# the module\n', `# the module\ndigest: ${DIGEST_B}\n`));
    const crlf = STYLED.replace(/\n/g, '\r\n');
    expect(withDigest(crlf, DIGEST_B, 'styled.tool.yaml').text).toBe(
      crlf.replace('# the module\r\n', `# the module\r\ndigest: ${DIGEST_B}\r\n`),
    );
  });

  it("fills an empty or null digest in its own line, keeping the line's comment", () => {
    const empty = STYLED.replace('# the module\n', '# the module\ndigest: null   # the build writes this\n');
    expect(withDigest(empty, DIGEST_A, 'styled.tool.yaml').text).toBe(empty.replace('digest: null', `digest: ${DIGEST_A}`));
  });

  it('refuses YAML that does not parse, naming the file', () => {
    expect(() => withDigest('id: [unclosed', DIGEST_B, 'bad.tool.yaml')).toThrow(/^bad\.tool\.yaml:1: -: invalid YAML/);
  });
});

describe('readManifestFields', () => {
  it('defaults the entrypoint to execute and reads the digest', () => {
    const fields = readManifestFields(MANIFEST.replace(/^entrypoint:.*\n/m, ''), 'demo.tool.yaml');
    expect(fields).toEqual({
      id: 'seq.demo',
      abi: 'helix/v1',
      module: 'build/demo.wasm',
      entrypoint: 'execute',
      digest: DIGEST_A,
      capabilityAbiVersion: 1,
    });
  });

  it('reads capabilities.abiVersion, which decides whether the module may import the bulk path', () => {
    const fields = readManifestFields(`${MANIFEST}capabilities:\n  abiVersion: 2\n  allow: []\n`, 'demo.tool.yaml');
    expect(fields.capabilityAbiVersion).toBe(2);
  });

  it('lists every missing or wrong field at once', () => {
    expect(() => readManifestFields('abi: wasi/v1\n', 'x.tool.yaml')).toThrow(
      'x.tool.yaml: id must be a non-empty string; module must be a non-empty string; abi must be helix/v1 or extism/v1, not wasi/v1',
    );
  });

  it('requires an entrypoint for extism/v1', () => {
    const extism = MANIFEST.replace('helix/v1', 'extism/v1').replace(/^entrypoint:.*\n/m, '');
    expect(() => readManifestFields(extism, 'x.tool.yaml')).toThrow(/entrypoint is required for extism\/v1/);
  });
});

describe('moduleDigest', () => {
  it('is sha256: followed by the lowercase hex digest', () => {
    expect(moduleDigest(new TextEncoder().encode('abc'))).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
