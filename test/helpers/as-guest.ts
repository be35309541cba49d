// AssemblyScript guests (conformance/assembly/) for the tests: the conformance kit's compiler.
export { compileGuest } from '../../conformance/kit/as-guest.js';
