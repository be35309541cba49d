// The constants the command line's entry (main.ts) shares with its commands without importing
// them: the exit codes of every command and the languages `helix new` has templates for.

/** Exit codes of every helix command. */
export const EXIT = {
  ok: 0,
  /** The call ended in retryable_error or terminal_error; `helix validate` found violations. */
  failed: 1,
  /** invalid_request, or bad command-line usage. */
  invalid: 2,
  /** The host could not start (fail-closed: invalid toolpacks or policy). */
  startup: 3,
} as const;

/** The languages with a template: AssemblyScript (helix/v1), C (helix/v1), an Extism plugin in AssemblyScript (extism/v1). */
export const TEMPLATE_LANGS = ['as', 'c', 'extism'] as const;

/** One of TEMPLATE_LANGS. */
export type TemplateLang = (typeof TEMPLATE_LANGS)[number];
