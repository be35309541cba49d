// The RO-Crate profiles Helix run crates claim, and a checker of their MUST-level requirements,
// used by the exporter's tests and the conformance suite to prove an exported crate is consumable.
//
// Versions: RO-Crate 1.1 with Workflow RO-Crate 1.0 and the Workflow Run RO-Crate profiles 0.5
// (Process, Workflow, Provenance Run Crate). 0.5 is the last release built on RO-Crate 1.1, which
// is what runcrate, WorkflowHub and Galaxy read today. 0.6 (2026-09) moved to RO-Crate 1.3 and
// Workflow RO-Crate 1.1, and its changelog says it is not backward compatible with 1.1 (the IRIs
// of ComputationalWorkflow, FormalParameter, input and output changed). Moving up later means
// changing the URIs below and the context; the crate uses none of input, output, FormalParameter.

/** RO-Crate 1.1: the specification permalink and its JSON-LD context. */
export const RO_CRATE_SPEC = 'https://w3id.org/ro/crate/1.1';
export const RO_CRATE_CONTEXT = 'https://w3id.org/ro/crate/1.1/context';
/** The workflow-run ro-terms context: defines `sha256` (not in the RO-Crate 1.1 context). */
export const WORKFLOW_RUN_CONTEXT = 'https://w3id.org/ro/terms/workflow-run/context';
export const PROCESS_RUN_CRATE = 'https://w3id.org/ro/wfrun/process/0.5';
export const WORKFLOW_RUN_CRATE = 'https://w3id.org/ro/wfrun/workflow/0.5';
export const PROVENANCE_RUN_CRATE = 'https://w3id.org/ro/wfrun/provenance/0.5';
export const WORKFLOW_RO_CRATE = 'https://w3id.org/workflowhub/workflow-ro-crate/1.0';

/** The profiles a Helix run crate conforms to, with the names and versions of their entities. */
export const RUN_CRATE_PROFILES: ReadonlyArray<{ readonly id: string; readonly name: string; readonly version: string }> = [
  { id: PROCESS_RUN_CRATE, name: 'Process Run Crate', version: '0.5' },
  { id: WORKFLOW_RUN_CRATE, name: 'Workflow Run Crate', version: '0.5' },
  { id: PROVENANCE_RUN_CRATE, name: 'Provenance Run Crate', version: '0.5' },
  { id: WORKFLOW_RO_CRATE, name: 'Workflow RO-Crate', version: '1.0' },
];

type Entity = Record<string, unknown> & { '@id': string };

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const asArray = (v: unknown): unknown[] => (v === undefined || v === null ? [] : Array.isArray(v) ? v : [v]);
const isRef = (v: unknown): v is { '@id': string } => isObject(v) && typeof v['@id'] === 'string';
const refIds = (v: unknown): string[] => asArray(v).flatMap((x) => (isRef(x) ? [x['@id']] : []));
const typesOf = (e: Entity | undefined): string[] => asArray(e?.['@type']).filter((t): t is string => typeof t === 'string');
const hasType = (e: Entity | undefined, ...types: string[]): boolean => types.every((t) => typesOf(e).includes(t));
/** An absolute URI (scheme:...); everything else is a path or `#id` local to the crate. */
const isAbsolute = (id: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:/.test(id);
const nonEmpty = (v: unknown): boolean => typeof v === 'string' && v.trim() !== '';

/**
 * The violations of the profile requirements Helix implements, each prefixed with the
 * requirement it breaks; an empty list means the crate passes. Checks MUST-level rules only.
 */
export function checkRunCrate(metadata: unknown): string[] {
  const out: string[] = [];
  if (!isObject(metadata)) return ['[RO-Crate 1.1 structure] the metadata is not a JSON object'];
  // RO-Crate 1.1 appendix "RO-Crate JSON-LD": the context is the RO-Crate 1.1 context; terms
  // outside it (here `sha256`) must come from an added context. Helix uses references, not values.
  const contexts = asArray(metadata['@context']);
  if (!contexts.includes(RO_CRATE_CONTEXT)) out.push(`[RO-Crate 1.1 JSON-LD] @context must include ${RO_CRATE_CONTEXT}`);
  const graph = metadata['@graph'];
  if (!Array.isArray(graph)) return [...out, '[RO-Crate 1.1 JSON-LD] @graph must be an array of entities'];

  const byId = new Map<string, Entity>();
  for (const [i, item] of graph.entries()) {
    if (!isObject(item) || !nonEmpty(item['@id'])) {
      out.push(`[RO-Crate 1.1 JSON-LD] @graph[${i}] has no @id`);
      continue;
    }
    const e = item as Entity;
    if (typesOf(e).length === 0) out.push(`[RO-Crate 1.1 JSON-LD] ${e['@id']} has no @type`);
    if (byId.has(e['@id'])) out.push(`[RO-Crate 1.1 JSON-LD] ${e['@id']} appears twice in @graph`);
    byId.set(e['@id'], e);
  }
  const entities = [...byId.values()];
  if (entities.some((e) => 'sha256' in e) && !contexts.includes(WORKFLOW_RUN_CONTEXT)) {
    out.push(`[RO-Crate 1.1 extending] sha256 is used but @context lacks ${WORKFLOW_RUN_CONTEXT}`);
  }

  // RO-Crate 1.1 appendix "RO-Crate JSON-LD": flattened and compacted, so a property refers to
  // another entity only as {"@id"}; a local reference (path or #id) must name an entity present.
  for (const e of entities) {
    for (const [key, value] of Object.entries(e)) {
      if (key.startsWith('@')) continue;
      for (const v of asArray(value)) {
        if (!isObject(v)) continue;
        if (!isRef(v) || Object.keys(v).length !== 1)
          out.push(`[RO-Crate 1.1 JSON-LD] ${e['@id']}.${key} nests an object; flattened JSON-LD refers by {"@id"} only`);
        else if (!isAbsolute(v['@id']) && !byId.has(v['@id']))
          out.push(`[RO-Crate 1.1 JSON-LD] ${e['@id']}.${key} references ${v['@id']}, which is not in @graph`);
      }
    }
  }

  // RO-Crate 1.1 "Root Data Entity": the descriptor, `about` the root, conformsTo the spec.
  const descriptor = byId.get('ro-crate-metadata.json');
  if (descriptor === undefined) return [...out, '[RO-Crate 1.1 root] no RO-Crate Metadata File Descriptor (ro-crate-metadata.json)'];
  if (!hasType(descriptor, 'CreativeWork')) out.push('[RO-Crate 1.1 root] the descriptor must be a CreativeWork');
  if (!refIds(descriptor.conformsTo).includes(RO_CRATE_SPEC))
    out.push(`[RO-Crate 1.1 root] the descriptor must conform to ${RO_CRATE_SPEC}`);
  const rootId = refIds(descriptor.about)[0];
  const root = rootId === undefined ? undefined : byId.get(rootId);
  if (root === undefined || rootId === undefined)
    return [...out, '[RO-Crate 1.1 root] the descriptor is not about a Root Data Entity in @graph'];

  // RO-Crate 1.1 "Direct properties of the Root Data Entity".
  if (!hasType(root, 'Dataset')) out.push('[RO-Crate 1.1 root] the root must be a Dataset');
  if (!rootId.endsWith('/')) out.push('[RO-Crate 1.1 root] the root @id must end with /');
  for (const key of ['name', 'description']) if (!nonEmpty(root[key])) out.push(`[RO-Crate 1.1 root] the root has no ${key}`);
  const published = root.datePublished;
  if (typeof published !== 'string' || !/^\d{4}(-\d{2}(-\d{2}(T[\d:.]+(Z|[+-]\d{2}:?\d{2})?)?)?)?$/.test(published)) {
    out.push('[RO-Crate 1.1 root] the root datePublished must be an ISO 8601 date');
  }
  // Workflow RO-Crate 1.0 "Crate": the crate MUST specify a license.
  if (refIds(root.license).length === 0 && !nonEmpty(root.license)) out.push('[Workflow RO-Crate 1.0] the root has no license');

  // RO-Crate 1.1 "Data Entities": files and folders MUST be linked from the root by hasPart,
  // directly or through nested Datasets; a File @id is a relative URI path or an absolute URI.
  const reachable = new Set<string>();
  const queue = [rootId];
  for (let next = queue.pop(); next !== undefined; next = queue.pop()) {
    for (const id of refIds(byId.get(next)?.hasPart)) {
      if (reachable.has(id)) continue;
      reachable.add(id);
      queue.push(id);
    }
  }
  for (const e of entities) {
    const id = e['@id'];
    if (id === rootId || id.startsWith('#') || id.startsWith('_:') || !(hasType(e, 'File') || hasType(e, 'Dataset'))) continue;
    if (!reachable.has(id)) out.push(`[RO-Crate 1.1 data entities] ${id} is a data entity not in the root's hasPart`);
    if (!isAbsolute(id) && (/[\s\\]/.test(id) || id.startsWith('/') || id.split('/').includes('..')))
      out.push(`[RO-Crate 1.1 data entities] ${id} is not a URI path inside the crate`);
  }

  // Process Run Crate 0.5, Workflow Run Crate 0.5 (and Provenance when claimed): the root
  // conformsTo MUST reference each profile as a CreativeWork entity.
  const claimed = refIds(root.conformsTo);
  const provenance = claimed.includes(PROVENANCE_RUN_CRATE);
  for (const profile of [PROCESS_RUN_CRATE, WORKFLOW_RUN_CRATE, WORKFLOW_RO_CRATE]) {
    if (!claimed.includes(profile)) out.push(`[Workflow Run Crate 0.5] the root conformsTo must include ${profile}`);
  }
  for (const id of claimed)
    if (!hasType(byId.get(id), 'CreativeWork'))
      out.push(`[Process Run Crate 0.5] conformsTo ${id} must be a CreativeWork entity in @graph`);

  out.push(...checkWorkflow(root, entities, byId, provenance));
  return out;
}

/** The main workflow and the actions: Workflow RO-Crate 1.0, Process/Workflow/Provenance Run Crate 0.5. */
function checkWorkflow(root: Entity, entities: Entity[], byId: Map<string, Entity>, provenance: boolean): string[] {
  const out: string[] = [];
  // Workflow RO-Crate 1.0 "Main Workflow": mainEntity is a [File, SoftwareSourceCode,
  // ComputationalWorkflow] with a programmingLanguage. Workflow Run Crate 0.5 requires it too.
  const mainId = refIds(root.mainEntity)[0];
  const main = mainId === undefined ? undefined : byId.get(mainId);
  if (mainId === undefined || main === undefined) out.push('[Workflow Run Crate 0.5] the root has no mainEntity in @graph');
  else {
    if (!hasType(main, 'File', 'SoftwareSourceCode', 'ComputationalWorkflow'))
      out.push(`[Workflow RO-Crate 1.0] mainEntity ${mainId} must be a File, SoftwareSourceCode and ComputationalWorkflow`);
    if (refIds(main.programmingLanguage).length === 0) out.push(`[Workflow RO-Crate 1.0] mainEntity ${mainId} has no programmingLanguage`);
  }

  // Process Run Crate 0.5 "CreateAction": instrument MUST identify the executed tool.
  const actions = entities.filter((e) => hasType(e, 'CreateAction'));
  for (const action of actions) {
    const tools = refIds(action.instrument);
    if (tools.length === 0) out.push(`[Process Run Crate 0.5] CreateAction ${action['@id']} has no instrument`);
    for (const id of tools) {
      const tool = byId.get(id);
      if (tool !== undefined && !['SoftwareApplication', 'SoftwareSourceCode', 'ComputationalWorkflow'].some((t) => hasType(tool, t))) {
        out.push(
          `[Process Run Crate 0.5] instrument ${id} of ${action['@id']} is not a SoftwareApplication, SoftwareSourceCode or ComputationalWorkflow`,
        );
      }
    }
  }
  // Workflow Run Crate 0.5 "Overview": the workflow's execution is a CreateAction with it as instrument.
  if (mainId !== undefined && !actions.some((a) => refIds(a.instrument).includes(mainId)))
    out.push(`[Workflow Run Crate 0.5] no CreateAction has the mainEntity ${mainId} as instrument`);
  if (!provenance || main === undefined || mainId === undefined) return out;

  // Provenance Run Crate 0.5 "Overview": the workflow hasPart every orchestrated tool; a
  // ControlAction points to a HowToStep (instrument) and a CreateAction (object); the workflow
  // lists its steps via step and is then also a HowTo; each step names its tool via workExample.
  const parts = new Set(refIds(main.hasPart));
  for (const action of actions) {
    for (const id of refIds(action.instrument))
      if (id !== mainId && !parts.has(id))
        out.push(`[Provenance Run Crate 0.5] tool ${id} of ${action['@id']} is not in the workflow's hasPart`);
  }
  const steps = new Set(refIds(main.step));
  if (steps.size > 0 && !hasType(main, 'HowTo')) out.push(`[Provenance Run Crate 0.5] workflow ${mainId} has steps but is not a HowTo`);
  for (const control of entities.filter((e) => hasType(e, 'ControlAction'))) {
    const step = refIds(control.instrument)[0];
    if (step === undefined || !hasType(byId.get(step), 'HowToStep'))
      out.push(`[Provenance Run Crate 0.5] ControlAction ${control['@id']} instrument must be a HowToStep`);
    else if (!steps.has(step)) out.push(`[Provenance Run Crate 0.5] step ${step} is not in the workflow's step list`);
    const run = refIds(control.object)[0];
    if (run === undefined || !hasType(byId.get(run), 'CreateAction'))
      out.push(`[Provenance Run Crate 0.5] ControlAction ${control['@id']} object must be a CreateAction`);
  }
  for (const id of steps) {
    const step = byId.get(id);
    if (step !== undefined && (!hasType(step, 'HowToStep') || refIds(step.workExample).length === 0))
      out.push(`[Provenance Run Crate 0.5] step ${id} must be a HowToStep with a workExample tool`);
  }
  return out;
}
