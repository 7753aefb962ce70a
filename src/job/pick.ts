/**
 * Which images of its source step a `from:` step animates: every image
 * (`from: photos`), or only the ones a person picked
 * (`from: { step: photos, pick: [{ scene: beach, n: 2 }] }`). Picking only
 * filters: a picked image's item has the key it has under the plain
 * `from: photos`, so narrowing or widening a pick never re-makes a clip.
 */
import type { PickEntry } from './schema.js';
import type { KeyPath } from './source-map.js';
import type { JobItem, LoadedStep, TemplateValue } from './types.js';
import { closest } from './zod-issues.js';

/** One image of a source item: the `outputIndex`-th (0-based) output of `item`. */
export interface SourceImage {
  readonly item: JobItem;
  readonly outputIndex: number;
}

/**
 * The source images `step` animates, in source order. Every pick entry must
 * name only the source's template variables and `n` within its copies, and
 * pick at least one image: otherwise the entry is reported through `at`
 * (paths relative to the step) and picks nothing.
 */
export function pickedImages(
  step: LoadedStep,
  fromItems: readonly JobItem[],
  at: (path: KeyPath, message: string, options?: { key?: boolean }) => void,
): SourceImage[] {
  const images = fromItems.flatMap((item) =>
    Array.from({ length: item.expectedOutputs }, (_, outputIndex) => ({ item, outputIndex })),
  );
  if (step.pick === undefined) return images;
  const names = new Set(fromItems.flatMap((item) => Object.keys(item.vars)));
  const copies = Math.max(1, ...fromItems.map((item) => item.expectedOutputs));
  const chosen = new Set<SourceImage>();
  step.pick.forEach((entry, index) => {
    const path = ['from', 'pick', index];
    const problem = entryProblem(entry, step.from ?? '', names, copies);
    if (problem) {
      // An unknown name is pointed at itself; a bad `n` at its value.
      at([...path, ...problem.key], problem.message, { key: problem.key[0] !== 'n' });
      return;
    }
    const matched = images.filter((image) => matches(image, entry));
    if (matched.length === 0) at(path, noMatchMessage(entry, step.from ?? '', fromItems));
    for (const image of matched) chosen.add(image);
  });
  return images.filter((image) => chosen.has(image));
}

function entryProblem(
  entry: PickEntry,
  source: string,
  names: ReadonlySet<string>,
  copies: number,
): { key: KeyPath; message: string } | undefined {
  for (const name of Object.keys(entry)) {
    if (name === 'n') {
      if (names.has('n'))
        return {
          key: ['n'],
          message: `\`n\` is the image number in a pick, and step \`${source}\` also has a template variable \`n\`: rename the variable to pick by it`,
        };
      continue;
    }
    if (names.has(name)) continue;
    const guess = closest(name, [...names]);
    const known =
      names.size > 0
        ? `its variables: ${[...names].join(', ')}`
        : 'it has no matrix, rows or from: values: pick by `n` only';
    return {
      key: [name],
      message: `step \`${source}\` has no template variable \`${name}\` (${guess ? `did you mean \`${guess}\`? ` : ''}${known})`,
    };
  }
  if (entry.n !== undefined && entry.n > copies)
    return {
      key: ['n'],
      message: `step \`${source}\` makes ${copies} image${copies === 1 ? '' : 's'} per generation: \`n\` is ${copies === 1 ? '1' : `1-${copies}`}`,
    };
  return undefined;
}

/** Values compare as text: `5` in the job matches a CSV row's "5". */
function sameValue(a: TemplateValue | undefined, b: TemplateValue | undefined): boolean {
  return a !== undefined && b !== undefined && String(a) === String(b);
}

function matches(image: SourceImage, entry: PickEntry): boolean {
  if (entry.n !== undefined && image.outputIndex + 1 !== entry.n) return false;
  return Object.entries(entry).every(
    ([name, value]) => name === 'n' || sameValue(image.item.vars[name], value),
  );
}

/** Says which value no source item has, or that the values never occur together. */
function noMatchMessage(entry: PickEntry, source: string, fromItems: readonly JobItem[]): string {
  const given = Object.entries(entry).filter(([name]) => name !== 'n');
  for (const [name, value] of given) {
    if (fromItems.some((item) => sameValue(item.vars[name], value))) continue;
    const values = [...new Set(fromItems.map((item) => item.vars[name]))]
      .filter((v) => v !== undefined)
      .map(String);
    const shown = values.length > 10 ? [...values.slice(0, 10), '...'] : values;
    const guess = closest(String(value), values);
    return `picks no image of step \`${source}\`: no item has ${name} "${value}"${guess ? ` (did you mean "${guess}"?)` : ''} (its values: ${shown.join(', ')})`;
  }
  const together = given.map(([name, value]) => `${name} "${value}"`).join(' and ');
  return `picks no image of step \`${source}\`: no item has ${together} together`;
}
