const D = '/work/wt/i13-start/dist/host/';
let t = performance.now();
const lap = (label) => { const n = performance.now(); console.log(label.padEnd(44), (n - t).toFixed(1), 'ms'); t = n; };
const { createHost } = await import(D + 'host.js'); lap('import host.js (all)');
const { loadPolicy } = await import(D + 'policy/load-policy.js');
const pol = loadPolicy(); lap('loadPolicy');
const lt = await import(D + 'loader/load-toolpacks.js');
const sb = await import(D + 'loader/schema-bundle.js');
const js = await import(D + 'loader/json-schema.js');
const mc = await import(D + 'loader/module-check.js');
const { bundledPluginsDir } = await import(D + 'paths.js');
const r = await lt.loadToolpacks(bundledPluginsDir(), pol.policy); lap('loadToolpacks (all 9)');
// per piece
const { readFileSync } = await import('node:fs');
let comp = 0, chk = 0, inst = 0;
const w = await import(D + 'wasm/index.js');
for (const tool of r.tools) {
  let a = performance.now(); js.compileJsonSchema(tool.inputSchema); js.compileJsonSchema(tool.outputSchema); comp += performance.now() - a;
  a = performance.now(); w.decodeModule(tool.module.bytes); const ins = w.instrumentModule(tool.module.bytes, { maxMemoryPages: tool.limits.maxMemoryPages }); inst += performance.now() - a;
  a = performance.now(); await WebAssembly.compile(ins.bytes); chk += performance.now() - a;
}
console.log('  of which ajv compile (again)', comp.toFixed(1), 'decode+instrument', inst.toFixed(1), 'wasm compile', chk.toFixed(1));
t = performance.now();
const host = await createHost({ home: process.env.HELIX_HOME }); lap('createHost (all)');
const res = await host.call({ call_id: 'x', tool_id: 'seq.gc_content', tool_version: '*', input: { sequence: 'ACGT' }, constraints: {}, dry_run: false }); lap('call (replay) ' + res.replayed);
await host.close(); lap('close');
