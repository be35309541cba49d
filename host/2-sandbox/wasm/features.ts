// Bit flags for the post-MVP proposals a module uses, collected while decoding and reported as
// sorted names in ModuleInfo.features.

/** One bit per proposal. */
export const Feature = {
  bulkMemory: 1 << 0,
  exceptions: 1 << 1,
  exnref: 1 << 2,
  extendedConst: 1 << 3,
  functionReferences: 1 << 4,
  memory64: 1 << 5,
  multiMemory: 1 << 6,
  multiValue: 1 << 7,
  referenceTypes: 1 << 8,
  relaxedSimd: 1 << 9,
  satFloatToInt: 1 << 10,
  signExt: 1 << 11,
  simd: 1 << 12,
  tailCall: 1 << 13,
  threads: 1 << 14,
} as const;

const names: [number, string][] = [
  [Feature.bulkMemory, 'bulk-memory'],
  [Feature.exceptions, 'exceptions'],
  [Feature.exnref, 'exnref'],
  [Feature.extendedConst, 'extended-const'],
  [Feature.functionReferences, 'function-references'],
  [Feature.memory64, 'memory64'],
  [Feature.multiMemory, 'multi-memory'],
  [Feature.multiValue, 'multi-value'],
  [Feature.referenceTypes, 'reference-types'],
  [Feature.relaxedSimd, 'relaxed-simd'],
  [Feature.satFloatToInt, 'sat-float-to-int'],
  [Feature.signExt, 'sign-ext'],
  [Feature.simd, 'simd'],
  [Feature.tailCall, 'tail-call'],
  [Feature.threads, 'threads'],
];

/** The sorted proposal names of a feature bit set. */
export function featureNames(bits: number): string[] {
  return names.filter(([bit]) => bits & bit).map(([, name]) => name);
}
