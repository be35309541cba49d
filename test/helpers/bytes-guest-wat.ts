// Guests that send chosen bytes, for the tests of the JSON bounds and the envelopes: the
// conformance kit's (an input {"hex": ...} carries the bytes; the module outputs them, sends
// them as a capability request, or, as an Extism plugin, does either or sets them as its error).
export { bytesExtismModule, bytesInput, bytesOutputModule, bytesRequestModule } from '../../conformance/kit/io-guests.js';
