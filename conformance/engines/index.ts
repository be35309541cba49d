// The engine adapters, one per engine: what the runner hands each check as its engine.
import type { Engine, EngineAdapter } from './adapter.js';
import { containerAdapter } from './container.js';
import { extismAdapter } from './extism.js';
import { helixAdapter } from './helix.js';

export type { CallerAnswer, CapabilityCaller, EngineAdapter, EngineGuests, GuestAbi, ModuleOptions, OutputForm, Phase } from './adapter.js';

const ADAPTERS: Readonly<Record<Engine, EngineAdapter>> = { helix: helixAdapter, extism: extismAdapter, container: containerAdapter };

/** The adapter of `engine`. */
export function adapterFor(engine: Engine): EngineAdapter {
  return ADAPTERS[engine];
}
