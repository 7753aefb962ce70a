/**
 * Expansion of a loaded job into items, each checked against its model
 * contract. Every problem (unknown model, template variable, rows file,
 * contract violation, media reference) is collected and thrown at once.
 */
import type { Model } from '../contract/index.js';
import { buildItems } from './build-items.js';
import { stepCombinations } from './combinations.js';
import { abilitiesOf, type ContractChecker, compileContract } from './contract-check.js';
import { JobFileError, type JobIssue } from './issues.js';
import { DEFAULT_JOB_LIMITS, productOf } from './limits.js';
import { MediaResolver } from './media.js';
import { pickedImages } from './pick.js';
import { issueAt, type KeyPath } from './source-map.js';
import type { JobItem, LoadedJob, LoadedStep, ModelCatalog } from './types.js';
import { closest } from './zod-issues.js';

export interface Expansion {
  readonly items: readonly JobItem[];
  /** Items by step id, in step order. */
  readonly byStep: ReadonlyMap<string, readonly JobItem[]>;
  /** Warnings (e.g. field types ibatch does not know); errors are thrown. */
  readonly warnings: readonly JobIssue[];
}

/** How many items and outputs one step expands into. */
export interface StepCount {
  readonly id: string;
  readonly items: number;
  readonly outputs: number;
}

export interface JobScan {
  /** Expanded steps, in step order. */
  readonly steps: readonly StepCount[];
  /** Warnings (e.g. field types ibatch does not know); errors are thrown. */
  readonly warnings: readonly JobIssue[];
}

/** Expands and checks every step; throws `JobFileError` with all problems. */
export function expandJob(job: LoadedJob, models: ModelCatalog): Expansion {
  const items: JobItem[] = [];
  return expansionOf(
    items,
    scanJob(job, models, (item) => items.push(item)),
  );
}

/** The items a scan gave to its `onItem`, grouped by step. */
export function expansionOf(items: readonly JobItem[], scan: JobScan): Expansion {
  const byStep = new Map<string, JobItem[]>(scan.steps.map((s) => [s.id, []]));
  for (const item of items) byStep.get(item.stepId)?.push(item);
  return { items, byStep, warnings: scan.warnings };
}

/**
 * `expandJob` without holding the job's items: each item goes to `onItem` as
 * it is made, in step order, and only the items of steps that another step
 * takes `from:` are kept. `validate` and `plan` of a 100,000-row job need
 * counts and price classes, not 100,000 item objects at once. Problems are
 * thrown at the end, so `onItem` may have seen items of an invalid job: act
 * on them only once this returns.
 */
export function scanJob(
  job: LoadedJob,
  models: ModelCatalog,
  onItem: (item: JobItem) => void,
): JobScan {
  const scan = scanSteps(job, models, onItem);
  if (scan.issues.some((i) => i.severity === 'error'))
    throw new JobFileError(scan.issues, job.source.text);
  return { steps: scan.steps, warnings: scan.issues };
}

/** Steps' keys that decide which items a step makes: refused, it makes none to check. */
const SHAPE_KEYS = ['matrix', 'rows', 'from', 'count', 'input'] as const;
const NOTHING: ReadonlySet<string> = new Set();

/**
 * `scanJob`'s checks, returning every issue instead of throwing. Each check
 * goes on as far as the step's earlier mistakes allow, without repeating
 * them: a step with an unknown model still has its templates and file names
 * checked (not its input values), a refused key skips only what needs it.
 */
export function scanSteps(
  job: LoadedJob,
  models: ModelCatalog,
  onItem: (item: JobItem) => void,
): { steps: StepCount[]; issues: JobIssue[] } {
  const issues: JobIssue[] = [];
  const counts = new Map<string, StepCount>();
  const sourceSteps = new Set(job.steps.flatMap((s) => (s.from === undefined ? [] : [s.from])));
  const kept = new Map<string, JobItem[]>();
  const media = new MediaResolver(job.dir, job.uploads);
  const checkers = new Map<string, ContractChecker>();
  const stepModels = new Map<string, Model>();
  const limits = job.limits ?? DEFAULT_JOB_LIMITS;
  let itemsBefore = 0;
  for (const step of job.steps) {
    const at = (path: KeyPath, message: string, options?: { key?: boolean }) =>
      issues.push(issueAt(job.source, ['generations', step.index, ...path], message, options));
    const refused = step.refused ?? NOTHING;
    const model = refused.has('model') ? undefined : models.get(step.modelId);
    if (!model && !refused.has('model')) {
      const guess = closest(step.modelId, [...models.keys()]);
      at(
        ['model'],
        `unknown model \`${step.modelId}\`${guess ? ` (did you mean \`${guess}\`?)` : ` (models: ${[...models.keys()].join(', ')})`}`,
      );
    }
    let checker: ContractChecker | undefined;
    if (model) {
      stepModels.set(step.id, model);
      checker = checkers.get(model.id) ?? compileContract(model);
      checkers.set(model.id, checker);
      for (const field of checker.unknownTypeFields) {
        if (field.name in step.input) {
          issues.push(
            issueAt(
              job.source,
              ['generations', step.index, 'input', field.name],
              `field type \`${field.type}\` is not known to ibatch: passed through unchecked`,
              { severity: 'warning' },
            ),
          );
        }
      }
      checkStepOptions(step, model, job, stepModels, at);
    }
    if (SHAPE_KEYS.some((key) => refused.has(key))) continue;
    if (step.from !== undefined && !counts.has(step.from)) continue; // its source already failed
    const sourceOutputs = step.from === undefined ? 1 : (counts.get(step.from)?.outputs ?? 0);
    const before = issues.length;
    const combos = stepCombinations(step, at, {
      perCombination: productOf([sourceOutputs, step.count]),
      before: itemsBefore,
      max: limits.maxItems,
      maxRowsFileBytes: limits.maxRowsFileBytes,
    });
    if (issues.length > before || !combos) continue;
    const sources = step.from === undefined ? undefined : (kept.get(step.from) ?? []);
    const images = sources === undefined ? undefined : pickedImages(step, sources, at);
    if (issues.length > before) continue;
    const keep: JobItem[] | undefined = sourceSteps.has(step.id) ? [] : undefined;
    if (keep) kept.set(step.id, keep);
    let items = 0;
    let outputs = 0;
    buildItems({ step, model, checker, combos, fromImages: images, media, job, issues }, (item) => {
      items++;
      outputs += item.expectedOutputs;
      keep?.push(item);
      // Without its model an item is only a source of values for its `from:` dependants.
      if (model) onItem(item);
    });
    counts.set(step.id, { id: step.id, items, outputs });
    itemsBefore += items;
  }
  return { steps: [...counts.values()], issues };
}

function checkStepOptions(
  step: LoadedStep,
  model: Model,
  job: LoadedJob,
  stepModels: ReadonlyMap<string, Model>,
  at: (path: KeyPath, message: string) => void,
): void {
  const abilities = abilitiesOf(model);
  if (step.copies !== undefined) {
    if (!abilities.copies && step.copies > 1)
      at(
        ['copies'],
        `model ${model.id} (${model.kind}) makes one output per generation: \`copies\` is for image models`,
      );
    else if (step.copies > abilities.maxCopies)
      at(['copies'], `model ${model.id} makes at most ${abilities.maxCopies} copies`);
  }
  for (const group of abilities.needsOneOf) {
    const given = group.some((name) =>
      name === 'generationId'
        ? step.from !== undefined
        : step.input[name] !== undefined && step.input[name] !== null,
    );
    if (!given) {
      const names = group.map((name) => (name === 'generationId' ? '`from:`' : `\`${name}\``));
      at(['input'], `model ${model.id} needs one of ${names.join(', ')}`);
    }
  }
  if (step.influencer !== undefined && !abilities.influencer) {
    at(['influencer'], `model ${model.id} does not take an influencer (influencerId)`);
  }
  if (step.from !== undefined) {
    const sourceModel = stepModels.get(step.from);
    const sourceStep = job.steps.find((s) => s.id === step.from);
    if (sourceStep && sourceModel && sourceModel.kind !== 'image') {
      at(
        ['from'],
        `step \`${step.from}\` makes ${sourceModel.kind}s (${sourceModel.id}); \`from:\` takes an image step`,
      );
    }
    if (!abilities.imageToVideo) {
      at(
        ['from'],
        `model ${model.id} does not accept a source generation (generationId): use an image-to-video model`,
      );
    }
  }
}
