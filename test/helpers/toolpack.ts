// Throwaway toolpacks for the tests: the conformance kit's writer.
export * from '../../conformance/kit/toolpack.js';
