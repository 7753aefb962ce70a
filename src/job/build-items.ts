/**
 * One step's items: its combinations (times its `from:` step's outputs and
 * its `count`) rendered into requests, each checked against the model's
 * contract. Problems go to `issues`, one per distinct mistake, not per item.
 */

import type { GenerationRequest, Model } from '../contract/index.js';
import { outputTemplateCheck, placeholderPattern } from '../outputs/index.js';
import type { Combinations } from './combinations.js';
import type { ContractChecker } from './contract-check.js';
import type { JobIssue } from './issues.js';
import { chainKey, itemKey, keyBasis, labelOf, nameOf } from './keys.js';
import type { MediaResolver } from './media.js';
import type { SourceImage } from './pick.js';
import { issueAt, type KeyPath, type LocateOptions } from './source-map.js';
import { compileInput, templateVariablePattern } from './template.js';
import type {
  JobItem,
  LoadedJob,
  LoadedStep,
  MediaRef,
  TemplateValue,
  TemplateVars,
} from './types.js';

/** Shared by every item without media references (most of a large CSV job). */
const NO_MEDIA: readonly MediaRef[] = Object.freeze([]);

/** Beyond this many distinct problems in one step, the rest are summarised. */
const MAX_ISSUES_PER_STEP = 50;

export interface StepToBuild {
  readonly step: LoadedStep;
  /**
   * Undefined when the model id is unknown (reported already): the templates
   * and file names are checked, the input values are not (that would only
   * repeat the unknown model), and the items made only feed `from:` steps.
   */
  readonly model: Model | undefined;
  readonly checker: ContractChecker | undefined;
  readonly combos: Combinations;
  /** The source images it animates (`from:`, after `pick`); undefined for a step without `from:`. */
  readonly fromImages: readonly SourceImage[] | undefined;
  readonly media: MediaResolver;
  readonly job: LoadedJob;
  readonly issues: JobIssue[];
}

export function buildItems(
  { step, model, checker, combos, fromImages, media, job, issues }: StepToBuild,
  emit: (item: JobItem) => void,
): void {
  const template = compileInput(step.input);
  const templated = new Set(
    Object.keys(step.input).filter((k) => JSON.stringify(step.input[k]).includes('{{')),
  );
  // The file name template is checked once per set of variable names, not per
  // item: a 100,000-row step has one set.
  const filenameProblems = new Map<string, ReturnType<typeof outputTemplateCheck>>();
  const filenameProblemOf = (names: readonly string[]) => {
    const id = names.join('\0');
    if (!filenameProblems.has(id))
      filenameProblems.set(id, outputTemplateCheck(step.filename, names));
    return filenameProblems.get(id);
  };
  const occurrences = new Map<string, number>();
  const keyOf = rowKeyVars(step, combos);
  // The line of each key's first row, for a step whose rows are named by `key:`.
  const firstLines = keyOf ? new Map<string, number | undefined>() : undefined;
  const seen = new Set<string>();
  let overflow = 0;
  const report = (
    label: string,
    path: KeyPath,
    message: string,
    perItem: boolean,
    where: LocateOptions = {},
  ) => {
    const text = perItem ? `item ${label}: ${message}` : message;
    const id = `${path.join('.')}\0${text}`;
    if (seen.has(id)) return;
    if (seen.size >= MAX_ISSUES_PER_STEP) {
      overflow++;
      return;
    }
    seen.add(id);
    issues.push(issueAt(job.source, ['generations', step.index, ...path], text, where));
  };
  const sources: ReadonlyArray<{ item?: JobItem; outputIndex: number }> = fromImages ?? [
    { outputIndex: 0 },
  ];
  const hasOwnValues = step.matrix !== undefined || step.rows !== undefined || step.count > 1;
  for (const source of sources) {
    combos.forEach((combo) => {
      for (let countIndex = 0; countIndex < step.count; countIndex++) {
        const keyVars = keyOf ? keyOf(combo.vars) : combo.vars;
        const basis = keyBasis(step.id, keyVars, countIndex);
        // Counted by the first occurrence's key rather than by the longer basis
        // (equal bases give equal keys): for a step without `from:` the map's
        // keys are the items' own key strings, so it costs no text of its own.
        const firstKey = itemKey(basis, keyVars, 1);
        const counted = source.item ? `${source.item.key}\0${firstKey}` : firstKey;
        const occurrence = (occurrences.get(counted) ?? 0) + 1;
        occurrences.set(counted, occurrence);
        if (firstLines && countIndex === 0) {
          if (occurrence === 1) firstLines.set(counted, combo.line);
          else {
            const file = combos.rows?.file ?? 'rows';
            const names = Object.entries(keyVars)
              .map(([name, value]) => `${name}=${String(value)}`)
              .join(', ');
            report(
              '',
              ['key'],
              `duplicate key ${names}: ${file}:${firstLines.get(counted) ?? '?'} and ${file}:${combo.line ?? '?'}`,
              false,
            );
          }
        }
        const ownKey = occurrence === 1 ? firstKey : itemKey(basis, keyVars, occurrence);
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
            { within: templateVariablePattern(miss.name) },
          );
        }
        const filenameProblem = filenameProblemOf(Object.keys(vars));
        if (filenameProblem) {
          const { problem, placeholder } = filenameProblem;
          report(label, ['filename'], problem, false, {
            ...(placeholder === undefined ? {} : { within: placeholderPattern(placeholder) }),
          });
        }
        if (rendered.missing.length > 0) continue;
        const checked = checker?.check(rendered.value) ?? {
          input: rendered.value,
          problems: [],
          media: [],
        };
        for (const problem of checked.problems) {
          const field = problem.path[0];
          report(
            label,
            ['input', ...problem.path],
            problem.message,
            typeof field === 'string' && templated.has(field),
            { key: problem.atKey === true },
          );
        }
        const mediaRefs: MediaRef[] = [];
        for (const value of checked.media) {
          const field = model?.fields.find((f) => f.name === value.field);
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
          else if ('ref' in resolved) mediaRefs.push(resolved.ref);
        }
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
          modelId: step.modelId,
          kind: model?.kind ?? 'image',
          request,
          expectedOutputs: (model?.kind ?? 'image') === 'image' ? (step.copies ?? 1) : 1,
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
          ...(keyOf && !source.item ? { keyed: true as const } : {}),
        });
      }
    });
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

/**
 * For a step whose rows are named by `key:`, the values its item keys are
 * made of: the key columns and any matrix values (every other row column
 * is left out, so changing it keeps the key). Undefined without `key:`.
 */
function rowKeyVars(
  step: LoadedStep,
  combos: Combinations,
): ((vars: TemplateVars) => TemplateVars) | undefined {
  const keyColumns = step.key;
  const rowColumns = combos.rows?.columns;
  if (!keyColumns || !rowColumns) return undefined;
  const left = new Set(rowColumns.filter((name) => !keyColumns.includes(name)));
  return (vars) => {
    const kept: Record<string, TemplateValue> = {};
    for (const [name, value] of Object.entries(vars)) if (!left.has(name)) kept[name] = value;
    return kept;
  };
}
