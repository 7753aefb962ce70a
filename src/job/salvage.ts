/**
 * What can still be checked of a job file the schema refused. Every refused
 * value is left out (its mistake is already reported), the rest is kept, so
 * the later checks (model ids, templates, input values, files) run in the
 * same pass and the user gets every mistake at once. What was left out is
 * remembered, so a check that needs it is skipped instead of reporting a
 * consequence of the first mistake (an influencer whose entry was refused is
 * not then "not on this account").
 */
import type { z } from 'zod';
import { InfluencerSpecSchema, type JobFile, StepSchema, UploadSetSchema } from './schema.js';
import type { KeyPath } from './source-map.js';

/** What the schema refused, by where it was. */
export interface Refused {
  /** Top-level keys whose value was refused as a whole (`uploads: yes`). */
  readonly rootKeys: ReadonlySet<string>;
  /** Per step index: the step's keys whose value was refused (or missing). */
  readonly stepKeys: ReadonlyMap<number, ReadonlySet<string>>;
  /** Upload sets and job-local influencers whose entry was refused, by id. */
  readonly uploads: ReadonlySet<string>;
  readonly influencers: ReadonlySet<string>;
}

/** A job file the schema accepted whole. */
export const NOTHING_REFUSED: Refused = {
  rootKeys: new Set(),
  stepKeys: new Map(),
  uploads: new Set(),
  influencers: new Set(),
};

export interface Salvaged {
  readonly spec: JobFile;
  readonly refused: Refused;
}

/** A stand-in for a required value that was refused, replaced once parsed. */
const STAND_IN = 'refused';

export function salvageJobFile(value: unknown, issues: readonly z.core.$ZodIssue[]): Salvaged {
  const rootKeys = new Set<string>();
  const stepKeys = new Map<number, Set<string>>();
  const dropped = new Set<number>();
  const uploads = new Set<string>();
  const influencers = new Set<string>();
  const note = (path: KeyPath): void => {
    const [top, second, third] = path;
    if (top === undefined) return;
    if (second === undefined) rootKeys.add(String(top));
    else if (top === 'generations' && typeof second === 'number') {
      if (third === undefined) dropped.add(second);
      else {
        const keys = stepKeys.get(second) ?? new Set<string>();
        keys.add(String(third));
        stepKeys.set(second, keys);
      }
    } else if (top === 'uploads') uploads.add(String(second));
    else if (top === 'influencers') influencers.add(String(second));
    else rootKeys.add(String(top));
  };
  for (const issue of issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    if (issue.code === 'unrecognized_keys') for (const key of issue.keys) note([...path, key]);
    else note(path);
  }

  const root = asRecord(value);
  const kept = (key: string) => (rootKeys.has(key) ? undefined : root[key]);
  const entries = <T>(key: string, refused: Set<string>, schema: z.ZodType<T>) => {
    const out: Record<string, T> = {};
    for (const [id, entry] of Object.entries(asRecord(kept(key)))) {
      const parsed = refused.has(id) ? undefined : schema.safeParse(entry);
      if (parsed?.success) out[id] = parsed.data;
      else refused.add(id);
    }
    return out;
  };
  const rawSteps = kept('generations');
  // Every step is kept at its index (issues are located by it); one that is
  // not even a mapping stands in with every key refused.
  const generations = (Array.isArray(rawSteps) ? rawSteps : []).map((raw, index) => {
    const step = dropped.has(index) ? undefined : salvageStep(raw, index, stepKeys.get(index));
    if (step) return step;
    stepKeys.set(index, new Set(Object.keys(StepSchema.shape)));
    return standInStep(index);
  });
  const name = kept('name');
  const budget = kept('budget');
  const output = kept('output');
  const spec: JobFile = {
    version: 1,
    name: typeof name === 'string' ? name : 'job',
    ...(typeof budget === 'number' ? { budget } : {}),
    ...(typeof output === 'string' ? { output } : {}),
    uploads: entries('uploads', uploads, UploadSetSchema),
    influencers: entries('influencers', influencers, InfluencerSpecSchema),
    generations,
  };
  return { spec, refused: { rootKeys, stepKeys, uploads, influencers } };
}

type Step = JobFile['generations'][number];

/** A step without its refused keys, required ones stood in for; undefined if it cannot parse. */
function salvageStep(
  raw: unknown,
  index: number,
  refused: ReadonlySet<string> | undefined,
): Step | undefined {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const step: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) {
    if (!refused?.has(key) && key in StepSchema.shape) step[key] = value;
  }
  const parsed = StepSchema.safeParse({
    ...step,
    id: STAND_IN,
    model: typeof step.model === 'string' ? step.model : STAND_IN,
    input: step.input ?? {},
  });
  if (!parsed.success) return undefined;
  // A refused id (not a slug) is still the name `from:` uses: keep its text.
  const id = (raw as Record<string, unknown>).id;
  const text = typeof id === 'string' || typeof id === 'number' ? String(id) : '';
  return { ...parsed.data, id: text === '' ? standInId(index) : text };
}

/** A step that is not a mapping; its id is no slug, so no `from:` names it by chance. */
function standInStep(index: number): Step {
  return {
    ...StepSchema.parse({ id: STAND_IN, model: STAND_IN, input: {} }),
    id: standInId(index),
  };
}

function standInId(index: number): string {
  return `(generations[${index}])`;
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}
