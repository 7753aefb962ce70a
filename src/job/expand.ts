/**
 * Expansion of a loaded job into items, each checked against its model
 * contract. Every problem (unknown model, template variable, rows file,
 * contract violation, media reference) is collected and thrown at once.
 */
import type { GenerationRequest, Model } from '../contract/index.js';
import { outputTemplateProblem } from '../outputs/index.js';
import { type Combination, stepCombinations } from './combinations.js';
import { abilitiesOf, type ContractChecker, compileContract } from './contract-check.js';
import { JobFileError, type JobIssue } from './issues.js';
import { chainKey, itemKey, keyBasis, labelOf, nameOf } from './keys.js';
import { DEFAULT_JOB_LIMITS, productOf } from './limits.js';
import { MediaResolver } from './media.js';
import { pickedImages, type SourceImage } from './pick.js';
import { issueAt, type KeyPath } from './source-map.js';
import { compileInput } from './template.js';
import type { JobItem, LoadedJob, LoadedStep, MediaRef, ModelCatalog } from './types.js';
import { closest } from './zod-issues.js';

/** Shared by every item without media references (most of a large CSV job). */
const NO_MEDIA: readonly MediaRef[] = Object.freeze([]);

/** Beyond this many distinct problems in one step, the rest are summarised. */
const MAX_ISSUES_PER_STEP = 50;

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
  const scan = scanJob(job, models, (item) => items.push(item));
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
    const model = models.get(step.modelId);
    if (!model) {
      const guess = closest(step.modelId, [...models.keys()]);
      at(
        ['model'],
        `unknown model \`${step.modelId}\`${guess ? ` (did you mean \`${guess}\`?)` : ` (models: ${[...models.keys()].join(', ')})`}`,
      );
      continue;
    }
    stepModels.set(step.id, model);
    let checker = checkers.get(model.id);
    if (!checker) {
      checker = compileContract(model);
      checkers.set(model.id, checker);
    }
    for (const field of checker.unknownTypeFields) {
      if (field.name in step.input) {
        issues.push(
          issueAt(
            job.source,
            ['generations', step.index, 'input', field.name],
            `field type \`${field.type}\` is not known to ibatch: passed through unchecked`,
            {
              severity: 'warning',
            },
          ),
        );
      }
    }
    const before = issues.length;
    checkStepOptions(step, model, job, stepModels, at);
    if (step.from !== undefined && !counts.has(step.from)) continue; // its source already failed
    const sourceOutputs = step.from === undefined ? 1 : (counts.get(step.from)?.outputs ?? 0);
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
    buildItems(step, model, checker, combos, images, media, job, issues, (item) => {
      items++;
      outputs += item.expectedOutputs;
      keep?.push(item);
      onItem(item);
    });
    counts.set(step.id, { id: step.id, items, outputs });
    itemsBefore += items;
  }
  const errors = issues.filter((i) => i.severity === 'error');
  if (errors.length > 0) throw new JobFileError(issues, job.source.text);
  return { steps: [...counts.values()], warnings: issues };
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

function buildItems(
  step: LoadedStep,
  model: Model,
  checker: ContractChecker,
  combos: readonly Combination[],
  /** The source images it animates (`from:`); undefined for a step without `from:`. */
  fromImages: readonly SourceImage[] | undefined,
  media: MediaResolver,
  job: LoadedJob,
  issues: JobIssue[],
  emit: (item: JobItem) => void,
): void {
  const template = compileInput(step.input);
  const templated = new Set(
    Object.keys(step.input).filter((k) => JSON.stringify(step.input[k]).includes('{{')),
  );
  const occurrences = new Map<string, number>();
  const seen = new Set<string>();
  let overflow = 0;
  const report = (label: string, path: KeyPath, message: string, perItem: boolean, key = false) => {
    const text = perItem ? `item ${label}: ${message}` : message;
    const id = `${path.join('.')}\0${text}`;
    if (seen.has(id)) return;
    if (seen.size >= MAX_ISSUES_PER_STEP) {
      overflow++;
      return;
    }
    seen.add(id);
    issues.push(issueAt(job.source, ['generations', step.index, ...path], text, { key }));
  };
  const sources: ReadonlyArray<{ item?: JobItem; outputIndex: number }> = fromImages ?? [
    { outputIndex: 0 },
  ];
  const hasOwnValues = step.matrix !== undefined || step.rows !== undefined || step.count > 1;
  for (const source of sources) {
    for (const combo of combos) {
      for (let countIndex = 0; countIndex < step.count; countIndex++) {
        const basis = keyBasis(step.id, combo.vars, countIndex);
        // Counted by the first occurrence's key rather than by the longer basis
        // (equal bases give equal keys): for a step without `from:` the map's
        // keys are the items' own key strings, so it costs no text of its own.
        const firstKey = itemKey(basis, combo.vars, 1);
        const counted = source.item ? `${source.item.key}\0${firstKey}` : firstKey;
        const occurrence = (occurrences.get(counted) ?? 0) + 1;
        occurrences.set(counted, occurrence);
        const ownKey = occurrence === 1 ? firstKey : itemKey(basis, combo.vars, occurrence);
        const ownLabel = labelOf(combo.vars, countIndex, step.count);
        const key = source.item
          ? chainKey(source.item.key, source.outputIndex, hasOwnValues ? ownKey : undefined)
          : ownKey;
        const label = source.item
          ? `${source.item.label} > output ${source.outputIndex + 1}${hasOwnValues ? `, ${ownLabel}` : ''}`
          : ownLabel;
        const ownName = nameOf(combo.vars, countIndex, step.count, step.id);
        // A clip is named after the image it animates ("… from 2" when that
        // item made several), then its own values.
        const name = source.item
          ? [
              source.item.name,
              source.item.expectedOutputs > 1 ? `from ${source.outputIndex + 1}` : '',
              hasOwnValues ? ownName : '',
            ]
              .filter((part) => part !== '')
              .join(' ')
          : ownName;
        const vars = source.item ? { ...source.item.vars, ...combo.vars } : combo.vars;
        const rendered = template.render(vars);
        for (const miss of rendered.missing) {
          const known = Object.keys(vars);
          report(
            label,
            ['input', ...miss.path],
            `unknown template variable \`${miss.name}\`${known.length ? ` (known: ${known.join(', ')})` : ' (this step has no matrix, rows or from: values)'}`,
            known.length > 0 && step.matrix?.include !== undefined,
          );
        }
        if (rendered.missing.length > 0) continue;
        const checked = checker.check(rendered.value);
        for (const problem of checked.problems) {
          const field = problem.path[0];
          report(
            label,
            ['input', ...problem.path],
            problem.message,
            typeof field === 'string' && templated.has(field),
            problem.atKey,
          );
        }
        const mediaRefs: MediaRef[] = [];
        for (const value of checked.media) {
          const field = model.fields.find((f) => f.name === value.field);
          const resolved = media.resolve(
            value.field,
            value.index,
            value.value,
            field?.type ?? 'image',
          );
          const path =
            value.index === undefined
              ? ['input', value.field]
              : ['input', value.field, value.index];
          if ('problem' in resolved)
            report(label, path, resolved.problem, templated.has(value.field));
          else mediaRefs.push(resolved.ref);
        }
        const filenameProblem = outputTemplateProblem(step.filename, Object.keys(vars));
        if (filenameProblem) report(label, ['filename'], filenameProblem, false);
        const request: GenerationRequest = {
          input: checked.input,
          ...(step.copies !== undefined ? { copies: step.copies } : {}),
          ...(step.influencer && 'id' in step.influencer
            ? { influencerId: step.influencer.id }
            : {}),
        };
        emit({
          stepId: step.id,
          key,
          label,
          name,
          modelId: model.id,
          kind: model.kind,
          request,
          expectedOutputs: model.kind === 'image' ? (step.copies ?? 1) : 1,
          vars,
          countIndex,
          ...(step.influencer ? { influencer: step.influencer } : {}),
          ...(source.item
            ? {
                source: {
                  stepId: source.item.stepId,
                  itemKey: source.item.key,
                  outputIndex: source.outputIndex,
                },
              }
            : {}),
          mediaRefs: mediaRefs.length > 0 ? mediaRefs : NO_MEDIA,
        });
      }
    }
  }
  if (overflow > 0) {
    issues.push(
      issueAt(
        job.source,
        ['generations', step.index, 'input'],
        `... and ${overflow} more problems in step \`${step.id}\``,
      ),
    );
  }
}
