/**
 * What the journal says of a job's runs and items on one service, as the
 * decision of the next run (next-run.ts), `status` and the adoption of a
 * lost journal read it: the scope a run spends in, each item's latest record,
 * a run's outputs by item, the newest run on a service and a run id's family.
 */
import {
  type HeldStrings,
  type ItemHistoryRow,
  isAdoptedRun,
  type Journal,
  type RunRecord,
  serviceOfRun,
} from '../../journal/index.js';
import { removedRows } from '../../plan/index.js';
import { canonicalServiceUrl } from '../../shared/index.js';
import { TRAINING_STEP } from './item-identity.js';

/** What identifies the service and account a run spends on. */
export interface RunScope {
  /** The service's canonical base URL (`canonicalServiceUrl`). */
  readonly service: string;
  /** service + account fingerprint (never the key). */
  readonly scope: string;
}

/** The scope of a run: the service and the account (by fingerprint, never the key). */
export const scopeOf = (service: string, accountFingerprint: string): string =>
  `${service}#${accountFingerprint}`;

/** The journal reads the decision needs (a read-only journal offers them). */
export type JournalReader = Pick<
  Journal,
  | 'latestItems'
  | 'listOutputs'
  | 'getRun'
  | 'listRuns'
  | 'listItems'
  | 'eachRunItemHash'
  | 'progressByStep'
  | 'getItem'
  | 'getOpenAttempt'
  | 'findInfluencer'
  | 'latestReviews'
  | 'snapshot'
>;

/** A journal that does not exist yet: no history at all. */
export const NO_HISTORY: JournalReader = {
  latestItems: () => new Map(),
  listOutputs: () => [],
  getRun: () => undefined,
  listRuns: () => [],
  listItems: () => [],
  eachRunItemHash: () => {},
  progressByStep: () => [],
  getItem: () => undefined,
  getOpenAttempt: () => undefined,
  findInfluencer: () => undefined,
  latestReviews: () => [],
  snapshot: (read) => read(),
};

/** The generation ids of an item's outputs in one run, in output order. */
export function outputIdsReader(
  journal: Pick<Journal, 'listOutputs'>,
): (runId: string, itemKey: string) => readonly string[] {
  // One read of a run's outputs serves every item of it: a resume of a small
  // run in a 100,000-item job asks for the ids of thousands of done items.
  const byRun = new Map<string, Map<string, string[]>>();
  return (runId, itemKey) => {
    let items = byRun.get(runId);
    if (!items) {
      items = new Map();
      const outputs = [...journal.listOutputs(runId)].sort((a, b) => a.n - b.n);
      for (const o of outputs) {
        const ids = items.get(o.itemKey) ?? [];
        ids.push(o.generationId ?? '');
        items.set(o.itemKey, ids);
      }
      byRun.set(runId, items);
    }
    return items.get(itemKey) ?? [];
  };
}

/** The latest record of each of the job's generation items on this service. */
export function scopedLatest(
  journal: Pick<Journal, 'latestItems'>,
  jobName: string,
  target: Pick<RunScope, 'service'>,
  held?: HeldStrings,
): Map<string, ItemHistoryRow> {
  const latest = journal.latestItems(jobName, target.service, held);
  // A training's key is never a generation item's: dropping its rows after
  // picking the latest ones is dropping them before.
  for (const [key, row] of latest) if (row.stepId === TRAINING_STEP) latest.delete(key);
  return latest;
}

/**
 * What the job file changed in the job's record on this service, as `status`
 * counts it without the work of a whole decision (one read of the latest
 * records serves both): `removed`, items earlier runs made (or tried) that
 * the job file no longer describes (`keys`: its items' keys), left as they
 * are; `changed`, items whose identity the job file now describes otherwise
 * (`identities`: the job's items' identity hashes, by key; items left out
 * are not judged), the `changed` verdict the next `run` makes again.
 */
export function jobFileDrift(
  journal: Pick<Journal, 'latestItems'>,
  jobName: string,
  target: Pick<RunScope, 'service'>,
  keys: { has(key: string): boolean },
  identities: { get(key: string): string | undefined },
  /** The caller's equal strings for the records to hold (`latestItems`). */
  held?: HeldStrings,
): { readonly removed: ItemHistoryRow[]; readonly changed: ItemHistoryRow[] } {
  const latest = scopedLatest(journal, jobName, target, held);
  const changed = [...latest.values()].filter((row) => {
    const identity = identities.get(row.itemKey);
    return identity !== undefined && identity !== row.requestHash;
  });
  return { removed: removedRows(latest, keys), changed };
}

/**
 * The job's newest run on this service (recent runs only: an older one is
 * history, not a target); `started`: of the runs a `run` started, not
 * adopted ones.
 */
export function newestRunOnService(
  journal: Pick<JournalReader, 'listRuns'>,
  jobName: string,
  service: string,
  only: { readonly started?: boolean } = {},
): RunRecord | undefined {
  return journal
    .listRuns(jobName, 50)
    .find((run) => sameScope(run, { service }) && !(only.started && isAdoptedRun(run)));
}

/** The runs named X, X.2, X.3... (in that order, up to the first missing one). */
export function runIdFamily(journal: Pick<JournalReader, 'getRun'>, runId: string): RunRecord[] {
  const family: RunRecord[] = [];
  for (let n = 1; ; n += 1) {
    const run = journal.getRun(n === 1 ? runId : `${runId}.${n}`);
    if (!run) return family;
    family.push(run);
  }
}

/** Runs on the same service base URL (the key does not matter: a rotated key is the same account). */
const sameScope = (run: RunRecord, target: Pick<RunScope, 'service'>): boolean =>
  serviceOfRun(run) === canonicalServiceUrl(target.service);
