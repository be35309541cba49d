// The bundled default policy, for a person trying Helix on their own machine (README
// "Capabilities"): every loaded tool, the non-privileged capabilities, the working directory as the
// only import and export root. Network, secrets, Docker and Slurm need a policy file.
import type { PolicyInput } from '../../../abi/index.js';

/** The default policy document, before environment expansion and defaults. */
export function defaultPolicyDocument(): PolicyInput {
  return {
    version: 1,
    tools: { allow: ['*'] },
    grants: { '*': ['clock.*', 'log.*', 'kv.*', 'artifact.*'] },
    ceilings: {},
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a policy's own placeholder, which loadPolicy expands from the environment
    paths: { importRoots: ['${PWD}'], exportRoots: ['${PWD}'] },
  };
}
