// Package entry for Extism plugins: the AssemblyScript compiler resolves `@helix/sdk-as/extism`
// to this file. Apart from index.ts, so that only packs importing it need @extism/as-pdk.
export * from './assembly/extism';
