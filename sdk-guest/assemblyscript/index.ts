// Package entry for the AssemblyScript compiler, which resolves a bare import to <package>/index.ts.
export * from './assembly/index';
