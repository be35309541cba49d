// extism/v1 plugin building blocks for the tests: the conformance kit's.
export * from '../../conformance/kit/extism-wat.js';
