/**
 * The job file is the desired state (interface: "Re-running"): each item the
 * job describes is compared with its latest record in the journal, over every
 * run of the job against the same service, and gets one verdict.
 * `run` makes what is not done; `plan` quotes exactly that. One home for the
 * rule, so the quote and the run can never disagree.
 *
 * An item's identity is its key (step + template values + copy index) and its
 * request hash (the resolved request as the job file describes it). A `from:`
 * item is done only while the source output it was made from is still its
 * source's current output.
 */
import type { ItemHistoryRow } from '../journal/index.js';
import { ITEM_STATE } from '../journal/index.js';

/** What the next run does with an item. */
export type ItemVerdict =
  /** No record: made by the next run. */
  | 'new'
  /** Its request (or its source's output) changed since it was made or tried: made again. */
  | 'changed'
  /** Failed for good in an earlier run: made again with a new key. */
  | 'retry'
  /** Done, but its current output was rejected in review: made again with a new key (docs/review.md). */
  | 'rejected'
  /** Succeeded with its outputs recorded: nothing to do. */
  | 'done'
  /** Done, but its step was named by `--fresh`: made again on purpose. */
  | 'fresh'
  /** In the unfinished run being resumed, unchanged: the resume carries on with it. */
  | 'open'
  /** Failed for good in a run this invocation already finished: left for the next invocation. */
  | 'settled';

/** Verdicts that make a new attempt in the next run. */
export const VERDICTS_TO_MAKE: readonly ItemVerdict[] = [
  'new',
  'changed',
  'retry',
  'rejected',
  'fresh',
];

/** What the comparison needs of a job item, besides its request hash (`DesiredStateOptions.requestHash`). */
export interface WantedItem {
  readonly key: string;
  readonly stepId: string;
  readonly source?: { readonly itemKey: string; readonly outputIndex: number };
}

export interface DesiredStateOptions<T extends WantedItem> {
  /** An item's request hash (its identity, compared with the journal's). */
  readonly requestHash: (item: T) => string;
  /** The unfinished run a `run` would resume. */
  readonly openRunId?: string;
  /** Steps whose done items are made again (`--fresh`); `true` for every step. */
  readonly fresh?: ReadonlySet<string> | true;
  /** Runs finished by this invocation: their failures are not retried now. */
  readonly settledRuns?: ReadonlySet<string>;
  /** The generation ids of a done item's outputs, in output order (for `from:` checks). */
  readonly outputIds: (runId: string, itemKey: string) => readonly string[];
  /** Whether an output (or the whole item) the item made in that run was rejected in review. */
  readonly rejected?: (runId: string, itemKey: string) => boolean;
}

export interface DesiredState {
  readonly verdicts: ReadonlyMap<string, ItemVerdict>;
  /**
   * The latest record of each key the journal knows (job items and removed
   * ones). Throws once `releaseLatest` let it go.
   */
  readonly latest: ReadonlyMap<string, ItemHistoryRow>;
  /** Latest records of keys the job file no longer describes (left alone). */
  readonly removed: readonly ItemHistoryRow[];
}

/** A decision whose `latest` records can be let go (`releaseLatest`). */
class Decision implements DesiredState {
  #latest: ReadonlyMap<string, ItemHistoryRow> | undefined;

  constructor(
    readonly verdicts: ReadonlyMap<string, ItemVerdict>,
    latest: ReadonlyMap<string, ItemHistoryRow>,
    readonly removed: readonly ItemHistoryRow[],
  ) {
    this.#latest = latest;
  }

  get latest(): ReadonlyMap<string, ItemHistoryRow> {
    // An empty map here would read as "nothing was ever made": a reader
    // after the release is a mistake to see at once.
    if (!this.#latest) throw new Error("the decision's latest records were released");
    return this.#latest;
  }

  release(): void {
    this.#latest = undefined;
  }
}

/**
 * Lets go of `state.latest`: a record of every key the journal knows, which
 * a run reads only before its first item is driven and would otherwise hold
 * for its whole life (a resume of a large run holds a record per item it
 * made before). `verdicts` and `removed` stay.
 */
export function releaseLatest(state: DesiredState): void {
  if (state instanceof Decision) state.release();
}

/** `latest`: the latest record of each key on the service (a rotated key is the same account). */
export function desiredState<T extends WantedItem>(
  latest: ReadonlyMap<string, ItemHistoryRow>,
  items: readonly T[],
  options: DesiredStateOptions<T>,
): DesiredState {
  // Items by key, made only for a job with `from:` items (a 100,000-row job has none).
  let byKey: Map<string, T> | undefined;
  const verdicts = new Map<string, ItemVerdict>();
  const verdictOf = (item: T, seen: Set<string> | undefined): ItemVerdict => {
    const known = verdicts.get(item.key);
    if (known) return known;
    const own = ownVerdict(item, latest.get(item.key), options);
    let verdict = own;
    if ((own === 'done' || own === 'open') && item.source && !seen?.has(item.key)) {
      // The chain walked so far (a cycle ends it); made only for `from:` items.
      const chain = seen ?? new Set<string>();
      chain.add(item.key);
      byKey ??= new Map(items.map((i) => [i.key, i]));
      const source = byKey.get(item.source.itemKey);
      const sourceVerdict = source ? verdictOf(source, chain) : 'new';
      if (own === 'done' && !madeFromCurrentSource(item, latest, sourceVerdict, options))
        verdict = 'changed';
    }
    verdicts.set(item.key, verdict);
    return verdict;
  };
  for (const item of items) verdictOf(item, undefined);
  // Every item has its verdict now: `verdicts` knows the job's keys.
  return new Decision(verdicts, latest, removedRows(latest, verdicts));
}

/** The latest records of keys the job file no longer describes: left alone by `run`, listed by `plan` and `status`. */
export function removedRows(
  latest: ReadonlyMap<string, ItemHistoryRow>,
  wanted: { has(key: string): boolean },
): ItemHistoryRow[] {
  return [...latest.values()].filter((row) => !wanted.has(row.itemKey));
}

/**
 * With no record, or one of another request hash, an item is 'new' or
 * 'changed' whatever else holds: `RecordedItems` (recorded-items.ts) relies
 * on that to know an item is made before the decision.
 */
function ownVerdict<T extends WantedItem>(
  item: T,
  row: ItemHistoryRow | undefined,
  options: DesiredStateOptions<T>,
): ItemVerdict {
  if (!row) return 'new';
  const same = row.requestHash === options.requestHash(item);
  if (row.runId === options.openRunId) return same ? 'open' : 'changed';
  if (row.state === ITEM_STATE.succeeded) {
    if (!same) return 'changed';
    // The decision names the run that made the output: once remade, the item is done again.
    if (options.rejected?.(row.runId, row.itemKey)) return 'rejected';
    const fresh = options.fresh === true || options.fresh?.has(item.stepId) === true;
    return fresh ? 'fresh' : 'done';
  }
  if (options.settledRuns?.has(row.runId)) return same ? 'settled' : 'changed';
  return same ? 'retry' : 'changed';
}

/** A done `from:` item counts only while its source is done and still the output it animated. */
function madeFromCurrentSource(
  item: WantedItem,
  latest: ReadonlyMap<string, ItemHistoryRow>,
  sourceVerdict: ItemVerdict,
  options: Pick<DesiredStateOptions<WantedItem>, 'outputIds'>,
): boolean {
  if (!item.source || sourceVerdict !== 'done') return sourceVerdict === 'done';
  const own = latest.get(item.key);
  const source = latest.get(item.source.itemKey);
  if (!own || !source) return false;
  const current = options.outputIds(source.runId, source.itemKey)[item.source.outputIndex];
  return current !== undefined && current === own.sourceGenerationId;
}

/** Items of one step per verdict, and its items no longer in the job file. */
export type VerdictCounts = Record<ItemVerdict | 'removed', number>;

export const NO_VERDICTS: Readonly<VerdictCounts> = Object.freeze({
  new: 0,
  changed: 0,
  retry: 0,
  rejected: 0,
  done: 0,
  fresh: 0,
  open: 0,
  settled: 0,
  removed: 0,
});

/** Counts per step and verdict, for `plan` and the run's first line. */
export function verdictCounts(
  items: readonly Pick<WantedItem, 'key' | 'stepId'>[],
  state: Pick<DesiredState, 'verdicts' | 'removed'>,
): Map<string, VerdictCounts> {
  const counts = new Map<string, VerdictCounts>();
  const of = (stepId: string) => {
    let entry = counts.get(stepId);
    if (!entry) {
      entry = { ...NO_VERDICTS };
      counts.set(stepId, entry);
    }
    return entry;
  };
  for (const item of items) of(item.stepId)[state.verdicts.get(item.key) ?? 'new'] += 1;
  for (const row of state.removed) of(row.stepId).removed += 1;
  return counts;
}
