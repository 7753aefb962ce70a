/**
 * What `plan` and `run` keep of each job item: a lean record (key, step,
 * source, influencer, identity hash, price class, outputs) instead of the
 * whole `JobItem`, several times larger, which a large job holds per row.
 * The next run (next-run.ts) is decided on these records, by `run`'s rule;
 * where something needs whole items (a rejected item's remake, a resumed
 * run's changed items, a price class's first charged item, the identity of
 * an item naming local files, the items a run records and then sends) the
 * job is scanned again for just those keys (only when there are any). A
 * price class's first item the next run surely makes is kept as the scan
 * goes (RecordedItems): the nightly case (rows added to a done job) quotes
 * it without a second scan and its memory (figures: docs/benchmarks.md, "Figures behind choices in the code").
 */
import {
  type JobItem,
  type LoadedJob,
  type MediaRef,
  type ModelCatalog,
  scanJob,
} from '../../job/index.js';
import { type HeldStrings, type Journal, openJournalIfAny } from '../../journal/index.js';
import { PriceClasses, priceClassOfItem, RecordedItems } from '../../plan/index.js';
import { localPathOf, type PreparedFiles } from './input-files.js';
import { filelessIdentity, itemIdentity } from './item-identity.js';
import type { DecisionItem } from './next-run.js';

export interface PlanItem extends DecisionItem {
  readonly expectedOutputs: number;
  /** Its price class (one string per class, shared by its items). */
  readonly priceClass: string;
  /** Its identity hash; for an item naming local files, set by `identify` once they are hashed. */
  identity: string | undefined;
}

/** Thrown out of a scan once it has given every item asked for: the rest need not be made. */
const ALL_SEEN = Symbol('all items seen');

interface ClassEntry {
  /** The class id every item of the class shares. */
  readonly id: string;
  /** The class's first item in the job, whole: usually the one quoted. */
  readonly first: JobItem;
  /** The class's first item the next run surely makes, whole (when known). */
  made: JobItem | undefined;
}

/** Lean records of a job's items as its scan makes them (`add`), in job order. */
export class PlanItems {
  readonly items: PlanItem[] = [];
  readonly #classes = new Map<string, ClassEntry>();
  /** One reference per local file the items name (all `prepareJobFiles` reads of them). */
  readonly #media = new Map<string, MediaRef>();
  /** The models the items use (the contracts a run records). */
  readonly modelIds = new Set<string>();

  /** Told each time the job is scanned again (`eachOf`), with how many items it looks for. */
  onScanAgain: ((wanted: number) => void) | undefined;

  /** Whole items of `keepWhole` kept by the scan, until `jobItems` hands them out. */
  readonly #whole = new Map<string, JobItem>();

  /**
   * `recorded`: what the journal records (none given: nothing is known to be
   * made). `keepWhole`: a few items kept whole as the scan goes (what a
   * resume drives first), so asking for them scans the job no second time.
   */
  constructor(
    readonly job: LoadedJob,
    readonly catalog: ModelCatalog,
    readonly recorded?: RecordedItems,
    readonly keepWhole?: ReadonlySet<string>,
  ) {}

  /** A job's whole items as lean records (the library's `plan`, which holds them anyway). */
  static of(
    job: LoadedJob,
    catalog: ModelCatalog,
    items: Iterable<JobItem>,
    recorded?: RecordedItems,
  ): PlanItems {
    const planItems = new PlanItems(job, catalog, recorded);
    for (const item of items) planItems.add(item);
    return planItems;
  }

  add(item: JobItem): void {
    const classId = priceClassOfItem(this.catalog, item);
    let entry = this.#classes.get(classId);
    if (!entry) {
      entry = { id: classId, first: item, made: undefined };
      this.#classes.set(classId, entry);
    }
    const identity = filelessIdentity(this.job, item);
    if (!entry.made && identity !== undefined && this.recorded?.has(item.key, identity) === false)
      entry.made = item;
    this.modelIds.add(item.modelId);
    if (this.keepWhole?.has(item.key)) this.#whole.set(item.key, item);
    for (const ref of item.mediaRefs) {
      const file = localPathOf(this.job, ref);
      if (!this.#media.has(file)) this.#media.set(file, ref);
    }
    // Every field always set: one object shape for all records.
    this.items.push({
      key: item.key,
      stepId: item.stepId,
      source: item.source,
      influencer: item.influencer,
      expectedOutputs: item.expectedOutputs,
      priceClass: entry.id,
      identity,
    });
  }

  /** What `prepareJobFiles` needs of the items: the media references, one per file. */
  get mediaRefs(): readonly { readonly mediaRefs: readonly MediaRef[] }[] {
    return [{ mediaRefs: [...this.#media.values()] }];
  }

  /** Sets the identity of the items that name local files or a job-local influencer. */
  identify(files: PreparedFiles): void {
    const pending = new Set(this.items.filter((i) => i.identity === undefined).map((i) => i.key));
    if (pending.size === 0) return;
    const whole = this.jobItems(pending);
    for (const item of this.items) {
      const found = item.identity === undefined ? whole.get(item.key) : undefined;
      if (found) item.identity = itemIdentity(this.job, files, found);
    }
  }

  /** The identity hash of an item (after `identify`). */
  identity = (item: PlanItem): string => {
    if (item.identity === undefined) throw new Error(`item ${item.key} has no identity yet`);
    return item.identity;
  };

  /**
   * The key and identity strings of the item a journal record names, for the
   * record to hold instead of its copies (a resume otherwise holds two of
   * each for the whole run). Records mostly come in job order, so the next
   * item in job order is tried first; a record out of that order (a store
   * lists a run's items by key) is looked up in a map of the items by key,
   * built at the first such record and dropped with the reader.
   */
  held = (): HeldStrings => {
    let next = 0;
    let byKey: Map<string, PlanItem> | undefined;
    return (itemKey, requestHash) => {
      let item = this.items[next];
      if (item?.key === itemKey) next += 1;
      else {
        if (!byKey) {
          byKey = new Map();
          for (const each of this.items) byKey.set(each.key, each);
        }
        item = byKey.get(itemKey);
        if (!item) return { itemKey, requestHash };
      }
      // Only an equal hash is shared: a changed item's record keeps its own.
      const same = item.identity === requestHash ? item.identity : requestHash;
      return { itemKey: item.key, requestHash: same };
    };
  };

  /**
   * The whole job items of `keys`: those kept whole by the first scan, else
   * the job scanned again. The map is the caller's own (it may clear it).
   */
  jobItems = (keys: ReadonlySet<string>): Map<string, JobItem> => {
    const found = new Map<string, JobItem>();
    if (keys.size > 0 && [...keys].every((key) => this.#whole.has(key))) {
      // Kept by the first scan, in job order; handed out once (then memory freed).
      for (const [key, item] of this.#whole) if (keys.has(key)) found.set(key, item);
      for (const key of keys) this.#whole.delete(key);
      return found;
    }
    this.eachOf(keys, (item) => {
      found.set(item.key, item);
    });
    return found;
  };

  /**
   * The job scanned again: each whole item of `keys` with its lean record,
   * in job order. The scan stops once every key was seen (what a run
   * expands a batch at a time needs only the items up to its batch's last).
   * An item the job makes otherwise now (its rows file edited since) has
   * no lean record here: `lean` is then undefined.
   */
  eachOf(
    keys: ReadonlySet<string>,
    visit: (item: JobItem, lean: PlanItem | undefined) => void,
  ): void {
    if (keys.size === 0) return;
    this.onScanAgain?.(keys.size);
    let at = 0;
    let seen = 0;
    try {
      scanJob(this.job, this.catalog, (item) => {
        const lean = this.items[at];
        at += 1;
        if (!keys.has(item.key)) return;
        visit(item, lean?.key === item.key ? lean : undefined);
        seen += 1;
        if (seen === keys.size) throw ALL_SEEN;
      });
    } catch (error) {
      if (error !== ALL_SEEN) throw error;
    }
  }

  /**
   * The price classes of the items a run pays for, each with its first such
   * item (whole: the one quoted), as `PriceClasses.add` of whole items gives.
   */
  priceClasses(charged: readonly PlanItem[]): PriceClasses {
    const firsts = new Map<string, PlanItem>();
    for (const item of charged) if (!firsts.has(item.priceClass)) firsts.set(item.priceClass, item);
    // The class's first charged item, whole: kept by the scan, or found again.
    const kept = (item: PlanItem): JobItem | undefined => {
      const entry = this.#classes.get(item.priceClass);
      return [entry?.first, entry?.made].find((whole) => whole?.key === item.key);
    };
    const missing = new Set<string>();
    for (const item of firsts.values()) if (!kept(item)) missing.add(item.key);
    const again = missing.size === 0 ? undefined : this.jobItems(missing);
    const classes = new PriceClasses(this.catalog);
    for (const item of charged) {
      classes.count(item.priceClass, item, () => {
        const first = kept(item) ?? again?.get(item.key);
        if (!first) throw new Error(`item ${item.key} was not found again`);
        return first;
      });
    }
    return classes;
  }
}

/**
 * What the journal at `journalPath` records of a job's items on `service`
 * (none when there is no journal yet: every item is then surely made). Read
 * only, like the rest of `plan`.
 */
export async function recordedItems(
  journalPath: string,
  jobName: string,
  service: string,
): Promise<RecordedItems> {
  // They only spare a second scan of the job: a journal that cannot be read
  // (another version, damaged) is reported by the plan itself, after the job
  // file's own mistakes, as before.
  let journal: Journal | undefined;
  try {
    journal = await openJournalIfAny(journalPath);
  } catch {
    return RecordedItems.none;
  }
  if (!journal) return RecordedItems.none;
  try {
    return RecordedItems.of((onRecord) => journal.eachItemRequestHash(jobName, service, onRecord));
  } catch {
    return RecordedItems.none;
  } finally {
    journal.close();
  }
}
