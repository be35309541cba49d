// helix/v1 guest building blocks for the tests: the conformance kit's.
export * from '../../conformance/kit/guest-wat.js';
