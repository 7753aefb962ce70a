/**
 * The job file's whole items where the decision needs more than a
 * `DecisionItem` (next-run.ts): asked for by key, once, only when needed.
 */
import type { JobItem } from '../../job/index.js';
import type { DecideOptions, DecisionItem } from './next-run.js';

const NO_ITEMS: ReadonlyMap<string, JobItem> = new Map();

/** `options.jobItems` of `keys`, asked only when there are any. */
export function jobItemsOf<T extends DecisionItem>(
  keys: ReadonlySet<string>,
  options: Pick<DecideOptions<T>, 'jobItems'>,
): ReadonlyMap<string, JobItem> {
  return keys.size === 0 ? NO_ITEMS : options.jobItems(keys);
}

export function wholeItem(whole: ReadonlyMap<string, JobItem>, key: string): JobItem {
  const item = whole.get(key);
  if (!item) throw new Error(`the job file's item ${key} was not found again`);
  return item;
}
