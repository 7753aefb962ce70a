/**
 * Job items as the journal records them, and what changed in one since it was
 * recorded (named as the job file names the fields, for the resume message).
 */
import type { JobItem } from '../../job/index.js';
import type { NewItem } from '../../journal/index.js';

/** The request fields that differ, as the job file names them (`input.prompt`, `copies`, `model`). */
export function changedFields(
  before: unknown,
  after: unknown,
  modelBefore: string | null,
  modelAfter: string,
): string[] {
  const fields: string[] = [];
  if (modelBefore !== modelAfter) fields.push('model');
  const flat = (value: unknown, prefix: string, into: Map<string, string>) => {
    if (value && typeof value === 'object' && !Array.isArray(value)) {
      for (const [k, v] of Object.entries(value)) flat(v, prefix ? `${prefix}.${k}` : k, into);
    } else into.set(prefix, JSON.stringify(value));
    return into;
  };
  const a = flat(before, '', new Map());
  const b = flat(after, '', new Map());
  for (const name of new Set([...a.keys(), ...b.keys()])) {
    if (a.get(name) !== b.get(name)) fields.push(name);
  }
  return fields.length > 0 ? fields : ['request'];
}

/** A job item as the journal stores it; `identity` is its identity hash. */
export function toNewItem(item: JobItem, identity: string): NewItem {
  return {
    itemKey: item.key,
    stepId: item.stepId,
    label: item.label,
    modelId: item.modelId,
    kind: item.kind,
    request: item.request,
    requestHash: identity,
    expectedOutputs: item.expectedOutputs,
    sourceItemKey: item.source?.itemKey ?? null,
    vars: item.vars,
  };
}
