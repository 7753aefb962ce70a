/**
 * What `plan` keeps of each job item: a lean record (key, step, source,
 * influencer, identity hash, price class, outputs; about 250 bytes) instead
 * of the whole `JobItem` (about 850 bytes: a 100,000-row job's items alone
 * were 85 MB). The decision (next-run.ts) works on these records, by `run`'s
 * rule; where something needs whole items (a rejected item's remake, a
 * resumed run's changed items, a price class's first charged item, the
 * identity of an item naming local files) the job is scanned again for just
 * those keys (about 1 s per 100,000 rows, and only when there are any).
 */
import {
  type JobItem,
  type LoadedJob,
  type MediaRef,
  type ModelCatalog,
  scanJob,
} from '../job/index.js';
import { PriceClasses, priceClassOfItem } from '../plan/index.js';
import { localPathOf, type PreparedFiles } from './assets.js';
import { filelessIdentity, itemIdentity } from './item-identity.js';
import type { DecisionItem } from './next-run.js';

export interface PlanItem extends DecisionItem {
  readonly expectedOutputs: number;
  /** Its price class (one string per class, shared by its items). */
  readonly priceClass: string;
  /** Its identity hash; for an item naming local files, set by `identify` once they are hashed. */
  identity: string | undefined;
}

interface ClassEntry {
  /** The class id every item of the class shares. */
  readonly id: string;
  /** The class's first item in the job, whole: usually the one quoted. */
  readonly first: JobItem;
}

/** Lean records of a job's items as its scan makes them (`add`), in job order. */
export class PlanItems {
  readonly items: PlanItem[] = [];
  readonly #classes = new Map<string, ClassEntry>();
  /** One reference per local file the items name (all `prepareJobFiles` reads of them). */
  readonly #media = new Map<string, MediaRef>();

  constructor(
    readonly job: LoadedJob,
    readonly catalog: ModelCatalog,
  ) {}

  /** A job's whole items as lean records (the library's `plan`, which holds them anyway). */
  static of(job: LoadedJob, catalog: ModelCatalog, items: Iterable<JobItem>): PlanItems {
    const planItems = new PlanItems(job, catalog);
    for (const item of items) planItems.add(item);
    return planItems;
  }

  add(item: JobItem): void {
    const classId = priceClassOfItem(this.catalog, item);
    let entry = this.#classes.get(classId);
    if (!entry) {
      entry = { id: classId, first: item };
      this.#classes.set(classId, entry);
    }
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
      identity: filelessIdentity(this.job, item),
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

  /** The whole job items of `keys`: the job scanned again, only those kept. */
  jobItems = (keys: ReadonlySet<string>): ReadonlyMap<string, JobItem> => {
    const found = new Map<string, JobItem>();
    scanJob(this.job, this.catalog, (item) => {
      if (keys.has(item.key)) found.set(item.key, item);
    });
    return found;
  };

  /**
   * The price classes of the items a run pays for, each with its first such
   * item (whole: the one quoted), as `PriceClasses.add` of whole items gives.
   */
  priceClasses(charged: readonly PlanItem[]): PriceClasses {
    const firsts = new Map<string, PlanItem>();
    for (const item of charged) if (!firsts.has(item.priceClass)) firsts.set(item.priceClass, item);
    const missing = new Set<string>();
    for (const [classId, item] of firsts)
      if (this.#classes.get(classId)?.first.key !== item.key) missing.add(item.key);
    const whole = missing.size === 0 ? undefined : this.jobItems(missing);
    const classes = new PriceClasses(this.catalog);
    for (const item of charged) {
      classes.count(item.priceClass, item, () => {
        const first = whole?.get(item.key) ?? this.#classes.get(item.priceClass)?.first;
        if (first?.key !== item.key) throw new Error(`item ${item.key} was not found again`);
        return first;
      });
    }
    return classes;
  }
}
