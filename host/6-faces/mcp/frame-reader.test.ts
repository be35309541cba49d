// The stdio frame reader and the head scanner of oversize frames: every chunk boundary, LF and
// CRLF, the bound exactly hit and passed by one byte, memory held, and the id read from the head.
import { describe, expect, it } from 'vitest';
import { FrameHeadScanner } from './frame-head.js';
import { FrameReader, type Frame } from './frame-reader.js';

const b = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Feeds `input` split at the given offsets; returns the frames with their bytes as text. */
function read(maxBytes: number, input: Buffer, cuts: readonly number[] = []): Array<Record<string, unknown>> {
  const reader = new FrameReader(maxBytes);
  const frames: Frame[] = [];
  let at = 0;
  for (const cut of [...cuts, input.length]) {
    frames.push(...reader.push(input.subarray(at, cut)));
    expect(reader.heldBytes).toBeLessThanOrEqual(maxBytes + 1);
    at = cut;
  }
  return frames.map((f) =>
    f.kind === 'frame' ? { line: f.line, text: f.bytes.toString('utf8') } : { line: f.line, oversize: f.length, id: f.head.id },
  );
}

const head = (text: string): ReturnType<FrameHeadScanner['result']> => {
  const s = new FrameHeadScanner();
  s.feed(b(text));
  return s.result();
};

describe('FrameReader (ABI-MCP-001, ABI-MCP-002)', () => {
  const input = b('{"a":1}\r\n{"b":"é"}\n\n{"c":[1,2]}\r\n');
  const expected = [
    { line: 1, text: '{"a":1}' },
    { line: 2, text: '{"b":"é"}' },
    { line: 3, text: '' },
    { line: 4, text: '{"c":[1,2]}' },
  ];

  it('FrameReader gives the same frames for a chunk boundary at every byte, one and two cuts', () => {
    expect(read(64, input)).toEqual(expected);
    for (let i = 0; i <= input.length; i++) {
      expect(read(64, input, [i])).toEqual(expected);
      for (let j = i; j <= input.length; j++) expect(read(64, input, [i, j])).toEqual(expected);
    }
  });

  it('FrameReader passes a frame of exactly maxBytes with LF or CRLF, at every chunk boundary', () => {
    const frame = 'x'.repeat(10);
    for (const eol of ['\n', '\r\n']) {
      const bytes = b(`${frame}${eol}${frame}${eol}`);
      for (let i = 0; i <= bytes.length; i++)
        expect(read(10, bytes, [i])).toEqual([
          { line: 1, text: frame },
          { line: 2, text: frame },
        ]);
    }
  });

  it('FrameReader refuses a frame of maxBytes + 1, counting a CR that no LF follows, and keeps reading', () => {
    const cases: Array<[string, number]> = [
      ['x'.repeat(11), 11],
      [`${'x'.repeat(10)}\ry`, 12],
      [`${'x'.repeat(10)}\r\r`, 11],
    ];
    for (const [body, length] of cases) {
      const bytes = b(`${body}\n{"ok":1}\n`);
      for (let i = 0; i <= bytes.length; i++) {
        expect(read(10, bytes, [i])).toEqual([
          { line: 1, oversize: length, id: undefined },
          { line: 2, text: '{"ok":1}' },
        ]);
      }
    }
  });

  it('FrameReader holds at most maxBytes + 1 bytes of a long frame and reports its whole length and id', () => {
    const big = b(
      `{"jsonrpc":"2.0","method":"tools/call","params":{"arguments":{"s":"${'a'.repeat(100_000)}"}},"id":42}\n{"jsonrpc":"2.0","id":43,"method":"ping"}\n`,
    );
    const cuts = Array.from({ length: Math.floor(big.length / 997) }, (_, i) => (i + 1) * 997);
    const frames = read(1000, big, cuts);
    expect(frames).toEqual([
      { line: 1, oversize: big.indexOf('\n'), id: 42 },
      { line: 2, text: '{"jsonrpc":"2.0","id":43,"method":"ping"}' },
    ]);
  });
});

describe('FrameHeadScanner', () => {
  it('FrameHeadScanner reads a string or integer id at the start or the end of the frame', () => {
    expect(head('{"id":"abc","method":"x","params":{}}')).toEqual({ id: 'abc', hasId: true, hasMethod: true, hasResult: false });
    expect(head('{"method":"x","params":{"a":[1,{"b":"}"}]},"jsonrpc":"2.0","id":7}')).toMatchObject({ id: 7, hasId: true });
    expect(head('{ "id" : -12 , "method":"x"}')).toMatchObject({ id: -12 });
    expect(head('{"\\u0069d":5,"method":"x"}')).toMatchObject({ id: 5 });
    expect(head('{"id":"a\\"b","method":"x"}')).toMatchObject({ id: 'a"b' });
  });

  it('FrameHeadScanner ignores an id inside params or inside a string, and keeps the last of duplicates', () => {
    expect(head('{"method":"x","params":{"id":9},"note":"\\"id\\":8"}')).toEqual({
      id: undefined,
      hasId: false,
      hasMethod: true,
      hasResult: false,
    });
    expect(head('{"id":1,"method":"x","id":2}')).toMatchObject({ id: 2 });
  });

  it('FrameHeadScanner leaves an id that is not a string or an integer unread, but notes it was there', () => {
    for (const id of ['{"a":1}', '[1]', 'null', 'true', '1.5', '1e400', `"${'x'.repeat(2000)}"`]) {
      expect(head(`{"method":"x","id":${id}}`)).toMatchObject({ id: undefined, hasId: true });
    }
  });

  it('FrameHeadScanner tells a response and a notification apart, and finds nothing in a batch or a scalar', () => {
    expect(head('{"jsonrpc":"2.0","id":3,"result":{"id":4}}')).toEqual({ id: 3, hasId: true, hasMethod: false, hasResult: true });
    expect(head('{"jsonrpc":"2.0","method":"notifications/x","params":{}}')).toEqual({
      id: undefined,
      hasId: false,
      hasMethod: true,
      hasResult: false,
    });
    expect(head('[{"id":1,"method":"x"}]')).toEqual({ id: undefined, hasId: false, hasMethod: false, hasResult: false });
    expect(head('"id"')).toEqual({ id: undefined, hasId: false, hasMethod: false, hasResult: false });
  });

  it('FrameHeadScanner gives the same head for a chunk boundary at every byte', () => {
    const text = b('{"method":"tools/call","params":{"s":"a\\\\\\"b{[","id":1},"id":"k\\u00e9y"}');
    for (let i = 0; i <= text.length; i++) {
      const s = new FrameHeadScanner();
      s.feed(text.subarray(0, i));
      s.feed(text.subarray(i));
      expect(s.result()).toEqual({ id: 'kéy', hasId: true, hasMethod: true, hasResult: false });
    }
  });
});
