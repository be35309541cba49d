// WAT to module bytes for the tests: the conformance kit's compiler (wabt, every proposal on).
export { allFeatures, wabtValidate, wat2wasm } from '../../conformance/kit/wat.js';
