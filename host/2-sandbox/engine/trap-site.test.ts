// trapSite and panicLocation on the stacks and panic messages the engines meet: V8's frames of
// a module with and without names, a wrapper module under the plugin (the Extism shim), and the
// tails the AssemblyScript and C SDKs give a panic.
import { describe, expect, it } from 'vitest';
import { authorFunction, panicLocation, trapSite } from './trap-site.js';

const STACK = [
  'RuntimeError: unreachable',
  '    at ~lib/@helix/sdk-as/assembly/panic/helixAbort (wasm://wasm/09487e96:wasm-function[0]:0x1db)',
  '    at assembly/index/handle (wasm://wasm/09487e96:wasm-function[107]:0x2f7)',
  '    at wasm://wasm/09487e96:wasm-function[108]:0x300',
  '    at wasm://wasm/ad591f46:wasm-function[4]:0xed',
  '    at Wt.callBlock (data:text/javascript;base64,AAAA:3:8512)',
].join('\n');

describe('trapSite', () => {
  it('trapSite keeps the frames of the module that trapped, names an export by its index, and skips the wrapper module', () => {
    const site = trapSite(STACK, (index) => (index === 108 ? 'execute' : undefined));
    expect(site).toEqual({
      function: '~lib/@helix/sdk-as/assembly/panic/helixAbort',
      wasmFunction: 0,
      frames: [
        '~lib/@helix/sdk-as/assembly/panic/helixAbort (wasm-function[0])',
        'assembly/index/handle (wasm-function[107])',
        'execute (wasm-function[108])',
      ],
      names: ['~lib/@helix/sdk-as/assembly/panic/helixAbort', 'assembly/index/handle'],
    });
    expect(authorFunction(site)).toBe('assembly/index/handle');
  });

  it('trapSite gives the index alone for a function without a name, and nothing for a stack without wasm frames', () => {
    expect(trapSite('RuntimeError: unreachable\n    at wasm://wasm/1a2b3c4d:wasm-function[9]:0x1db')).toEqual({
      wasmFunction: 9,
      frames: ['wasm-function[9]'],
      names: [],
    });
    expect(trapSite('Error: boom\n    at f (file:///x.js:1:1)')).toBeUndefined();
    expect(trapSite(undefined)).toBeUndefined();
  });
});

describe('panicLocation', () => {
  it('panicLocation reads the AssemblyScript and C tails, and nothing from a message without one', () => {
    expect(panicLocation('no A allowed at assembly/index.ts:10:20')).toEqual({ file: 'assembly/index.ts', line: 10, column: 20 });
    expect(panicLocation('assertion failed: n > 0 at src/main.c:12')).toEqual({ file: 'src/main.c', line: 12 });
    expect(panicLocation('longer than 10 bases')).toBeUndefined();
  });
});
