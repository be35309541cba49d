// The container engine: the work Helix hands to a real outside engine (container toolpacks and
// docker.run on Docker, the slurm.* capabilities on a Slurm cluster). The WebAssembly toolpacks its
// checks load beside that work (the canary, the guests that call docker.run or slurm.submit) are
// helix/v1 modules, so everything but its name is the helix engine's.
import type { EngineAdapter } from './adapter.js';
import { helixAdapter } from './helix.js';

/** The container engine. */
export const containerAdapter: EngineAdapter = { ...helixAdapter, name: 'container' };
