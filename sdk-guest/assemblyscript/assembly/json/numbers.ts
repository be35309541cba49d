// The number bound the value tree and the writer share: JSON numbers are f64, exact as integers
// only up to 2^53 - 1, so integer accessors refuse beyond it and the writer prints a fraction.

/** Largest integer an f64 holds exactly (2^53 - 1); integer accessors refuse anything beyond. */
export const MAX_SAFE_INTEGER: f64 = 9007199254740991.0;
