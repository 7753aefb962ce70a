/**
 * The one rule for which outputs are current (interface: "Re-running"). For
 * each item the job file describes now, the outputs of its newest success
 * are current (an item that never succeeded: the rows of the newest run that
 * tried it). Every other row is not current, with why:
 *
 * - `superseded by RUN`: a newer run of the same item made the current output;
 * - `removed from the job`: the job file no longer describes the item (retired).
 *
 * Superseded and retired files stay on disk and in the manifest. Every reader
 * takes `current` from here: the manifest rewrite, `status`, the report, the
 * review page, `export`, `deliver` and the `approve`/`reject` globs.
 */
import type { ManifestRow } from './manifest-row.js';

/** The item keys the job file describes now (a job's keys: `DesiredState.verdicts`). */
export interface DescribedItems {
  has(itemKey: string): boolean;
}

/** A job file known to describe every item of its runs: no output is retired. */
export const EVERY_ITEM: DescribedItems = { has: () => true };

export const RETIRED_REASON = 'removed from the job';
const SUPERSEDED_PREFIX = 'superseded by ';

export const supersededReason = (runId: string): string => `${SUPERSEDED_PREFIX}${runId}`;

/** What a row's `currentReason` says of it: current, superseded or retired. */
export type CurrentState = 'current' | 'superseded' | 'retired';

export function currentStateOf(row: Pick<ManifestRow, 'current' | 'currentReason'>): CurrentState {
  if (row.current !== false) return 'current';
  return row.currentReason === RETIRED_REASON ? 'retired' : 'superseded';
}

/** The columns that decide `current`. */
export type CurrentMarked = Pick<ManifestRow, 'runId' | 'step' | 'item' | 'status'>;

/** What the rule says of one row. */
export interface CurrentMark {
  readonly current: boolean;
  /** Why not current (absent when current). */
  readonly currentReason?: string;
}

const CURRENT: CurrentMark = { current: true };

/**
 * The rule in two passes over rows listed in run order (oldest run first),
 * which need not all be in memory: `see` every row, then `judge` (or `mark`)
 * each. Without `described` no item counts as removed from the job.
 */
export class CurrentRule<Row extends CurrentMarked = ManifestRow> {
  /**
   * Per step, per item: its newest run (an index into `#runs`) and its newest
   * run with a succeeded row, packed in one small integer (`pack`). A rewrite
   * sees 100,000 rows: a number per item, keyed by the row's own item string,
   * not two maps of `step item` strings holding a run id each.
   */
  readonly #steps = new Map<string, Map<string, number>>();
  readonly #runs: (string | undefined)[] = [];
  readonly #runIndex = new Map<string | undefined, number>();

  #oneRun = false;

  constructor(private readonly described?: DescribedItems) {}

  see(row: Row): void {
    let items = this.#steps.get(row.step);
    if (!items) {
      items = new Map();
      this.#steps.set(row.step, items);
    }
    const run = this.#indexOf(row.runId);
    const known = items.get(row.item);
    const succeeded =
      row.status === 'succeeded' ? run : known === undefined ? NONE : newestSucceeded(known);
    items.set(row.item, pack(run, succeeded));
  }
  /**
   * In place of `see`: every row to judge is of one run. Each item's only run
   * is then its newest, so every row is current unless retired, and the
   * rows need no first pass (`status` counts a folder of 100,000 files).
   */
  seesOneRun(): void {
    this.#oneRun = true;
  }

  judge(row: Row): CurrentMark {
    if (this.described && !this.described.has(row.item))
      return { current: false, currentReason: RETIRED_REASON };
    if (this.#oneRun) return CURRENT;
    const known = this.#steps.get(row.step)?.get(row.item);
    const newest = known === undefined ? NONE : newestSucceeded(known);
    const index = newest !== NONE ? newest : known === undefined ? NONE : newestAny(known);
    const currentRun = index === NONE ? undefined : this.#runs[index];
    if (row.runId === currentRun) return CURRENT;
    return { current: false, currentReason: supersededReason(currentRun ?? 'another run') };
  }

  #indexOf(runId: string | undefined): number {
    let index = this.#runIndex.get(runId);
    if (index === undefined) {
      index = this.#runs.length;
      if (index >= RUN_SLOTS - 1) throw new Error(`more than ${RUN_SLOTS - 2} runs in one folder`);
      this.#runs.push(runId);
      this.#runIndex.set(runId, index);
    }
    return index;
  }

  /** As `mark`, changing `row` itself: for a row nothing else holds (a rebuild's own copy). */
  markInPlace(row: Row & { current?: boolean; currentReason?: string }): void {
    const mark = this.judge(row);
    row.current = mark.current;
    if (mark.currentReason === undefined) delete row.currentReason;
    else row.currentReason = mark.currentReason;
  }

  /** `row` with `current` (and `currentReason`) as the rule says; an older reason is dropped. */
  mark(row: Row): Row & CurrentMark {
    const { currentReason: _, ...rest } = row as Row & { currentReason?: string };
    return { ...(rest as Row), ...this.judge(row) };
  }
}

/** `CurrentRule` over rows held in memory, listed in run order. */
export function markCurrentRows<Row extends CurrentMarked>(
  rows: readonly Row[],
  described?: DescribedItems,
): (Row & CurrentMark)[] {
  const rule = new CurrentRule<Row>(described);
  for (const row of rows) rule.see(row);
  return rows.map((row) => rule.mark(row));
}

/** No run (an item without a succeeded row). */
const NONE = -1;
/** Runs one folder's rows may name: 2^20, so a packed pair of a few runs stays a small integer. */
const RUN_SLOTS = 2 ** 20;
const pack = (newestAnyRun: number, newestSucceededRun: number): number =>
  newestAnyRun * RUN_SLOTS + (newestSucceededRun + 1);
const newestAny = (packed: number): number => Math.floor(packed / RUN_SLOTS);
const newestSucceeded = (packed: number): number => (packed % RUN_SLOTS) - 1;
