// JSON pointers (RFC 6901) as the contract writes them in violations and artifact paths: one
// parser for the loader and the command line.

/** The keys of a JSON pointer (`/a/b~1c` is a, b/c; the empty pointer is the whole value). */
export function fromPointer(pointer: string): string[] {
  return pointer === ''
    ? []
    : pointer
        .slice(1)
        .split('/')
        .map((s) => s.replaceAll('~1', '/').replaceAll('~0', '~'));
}
