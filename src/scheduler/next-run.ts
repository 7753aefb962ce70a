/**
 * What the next `ibatch run` of a job does, decided without writing a thing:
 * which unfinished run it resumes and what that resume changes, which items
 * it makes (the desired-state verdicts of src/plan/desired-state.ts) and which
 * trainings it seeds. `selectRun` (select-run.ts) carries the decision out;
 * `plan` quotes it (`nextRun`). One rule for both, so a quote is what the run
 * then does.
 */
import type { JobItem, LoadedJob, ModelCatalog } from '../job/index.js';
import {
  FINISHED_RUN_STATUSES,
  ITEM_STATE,
  type ItemHistoryRow,
  type ItemRecord,
  isStateIn,
  type Journal,
  type NewItem,
  type RunRecord,
  serviceOfRun,
  TERMINAL_ITEM_STATES,
} from '../journal/index.js';
import {
  type DesiredState,
  desiredState,
  inScope,
  latestRows,
  removedRows,
  VERDICTS_TO_MAKE,
  type VerdictCounts,
  verdictCounts,
} from '../plan/index.js';
import { UsageError } from '../shared/index.js';
import type { PreparedFiles } from './assets.js';
import { assertFreshSteps, freshSteps } from './fresh.js';
import {
  identityOf,
  influencerConfigHash,
  TRAINING_STEP,
  trainingItemKey,
  trainingsToSeed,
} from './item-identity.js';
import { changedFields, toNewItem } from './item-records.js';
import { Rejections } from './remake.js';

/** What identifies the service and account a run spends on. */
export interface RunScope {
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
  | 'itemHistory'
  | 'listOutputs'
  | 'getRun'
  | 'listRuns'
  | 'listItems'
  | 'getOpenAttempt'
  | 'findInfluencer'
  | 'latestReviews'
>;

/** A journal that does not exist yet: no history at all. */
const NO_HISTORY: JournalReader = {
  itemHistory: () => [],
  listOutputs: () => [],
  getRun: () => undefined,
  listRuns: () => [],
  listItems: () => [],
  getOpenAttempt: () => undefined,
  findInfluencer: () => undefined,
  latestReviews: () => [],
};

export interface DecideOptions extends RunScope {
  readonly runId?: string;
  /** `--fresh`: steps whose done items are made again; `true` for all. */
  readonly fresh?: ReadonlySet<string> | true;
  /** Runs this invocation already finished (their failures wait for the next one). */
  readonly settledRuns?: ReadonlySet<string>;
  /** The model contracts: a rejected item is remade with a new seed where its model has one. */
  readonly catalog?: ModelCatalog;
  /** An item's identity hash (item-identity.ts). */
  readonly identity: (item: JobItem) => string;
  /** The trainings a new or resumed run needs as journal items. */
  readonly trainings: (makes: readonly JobItem[]) => readonly NewItem[];
}

/** What resuming the job's unfinished run changes in it (see `decideRun`). */
export interface ResumePlan {
  readonly run: RunRecord;
  /** Changed items nothing is in flight for: they take the job file's request. */
  readonly replace: readonly NewItem[];
  /** Items no longer in the job file never attempted: dropped from the run. */
  readonly drop: readonly ItemRecord[];
  /** Items no longer in the job file, attempted, idle and not finished: skipped. */
  readonly skip: readonly ItemRecord[];
  /** Changed items already paid for: finished as sent, then made by a follow-up run. */
  readonly deferred: number;
  /** What changed in the job file since the run started, by step and field (for the log). */
  readonly changes: readonly string[];
}

export interface RunDecision {
  readonly state: DesiredState;
  /**
   * Job items the run adds: new, changed, retry, rejected, fresh (not those
   * the resumed run holds). A rejected item carries its remade request (new
   * seed, edited prompt; remake.ts); its identity is the job file's item's.
   */
  readonly makes: readonly JobItem[];
  /** Training items the run seeds. */
  readonly trainings: readonly NewItem[];
  /** Present when the next run resumes the job's unfinished run. */
  readonly resume: ResumePlan | undefined;
}

/**
 * Decides, reading only: the unfinished run of the job is resumed (its keys
 * are the ones in flight) and given whatever else is missing; otherwise a new
 * run would hold only what is missing; nothing at all when nothing is.
 */
export function decideRun(
  journal: JournalReader,
  job: LoadedJob,
  items: readonly JobItem[],
  options: DecideOptions,
): RunDecision {
  const history = scopedHistory(journal, job.name, options);
  const open = openRunOf(journal, job, options);
  const rejections = new Rejections(journal.latestReviews(job.name));
  // Only what the comparison needs: a plan of a 100,000-row job holds these next to the items.
  const wanted = items.map((item) => ({
    key: item.key,
    stepId: item.stepId,
    requestHash: options.identity(item),
    ...(item.source ? { source: item.source } : {}),
  }));
  const state = desiredState(history, wanted, {
    ...(open ? { openRunId: open.runId } : {}),
    ...(options.fresh ? { fresh: options.fresh } : {}),
    ...(options.settledRuns ? { settledRuns: options.settledRuns } : {}),
    outputIds: outputIdsReader(journal),
    rejected: (runId, itemKey) => rejections.has(runId, itemKey),
  });
  const makes: JobItem[] = [];
  for (const item of items) {
    const verdict = state.verdicts.get(item.key) ?? 'new';
    if (!VERDICTS_TO_MAKE.includes(verdict)) continue;
    const latest = state.latest.get(item.key);
    if (open && latest?.runId === open.runId) continue;
    makes.push(
      verdict === 'rejected' && latest
        ? rejections.remake(item, latest.runId, options.catalog)
        : item,
    );
  }
  return {
    state,
    makes,
    trainings: options.trainings(makes),
    resume: open ? resumePlan(journal, items, open, options) : undefined,
  };
}

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

/** The job's generation items over its runs on this service, oldest first. */
export function scopedHistory(
  journal: Pick<Journal, 'itemHistory'>,
  jobName: string,
  target: RunScope,
): ItemHistoryRow[] {
  return journal
    .itemHistory(jobName)
    .filter((row) => row.stepId !== TRAINING_STEP && inScope(row, target.service));
}

/**
 * Items earlier runs of the job made (or tried) on this service
 * that the job file no longer describes (`keys` are its items' keys): left as
 * they are. `status` lists them without the work of a whole decision.
 */
export function itemsLeftAlone(
  journal: Pick<Journal, 'itemHistory'>,
  jobName: string,
  target: RunScope,
  keys: ReadonlySet<string>,
): ItemHistoryRow[] {
  return removedRows(latestRows(scopedHistory(journal, jobName, target)), keys);
}

/** The run a `run` resumes: `--run-id`'s when unfinished, else the job's newest run when unfinished. */
function openRunOf(
  journal: JournalReader,
  job: LoadedJob,
  options: DecideOptions,
): RunRecord | undefined {
  if (options.runId !== undefined) {
    const named = journal.getRun(options.runId);
    if (named && named.jobName !== job.name) {
      throw new UsageError(
        `run ${options.runId} belongs to job "${named.jobName}", not "${job.name}"`,
      );
    }
    // The newest of X, X.2, X.3...: a stopped X.2 is resumed, never left behind.
    const newest = runIdFamily(journal, options.runId).at(-1);
    return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
  }
  // Only the job's newest run on this service is resumed: another
  // service's ids mean nothing here (an in-process emulator is a new service
  // at every start), and an older unfinished run was left behind on purpose.
  // `--fresh` resumes it too (what it paid for is finished, not paid again)
  // and adds the fresh items to it.
  const newest = newestRunOnService(journal, job.name, options.service);
  return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
}

/** The job's newest run on this service (recent runs only: an older one is history, not a target). */
export function newestRunOnService(
  journal: Pick<JournalReader, 'listRuns'>,
  jobName: string,
  service: string,
): RunRecord | undefined {
  return journal.listRuns(jobName, 50).find((run) => sameScope(run, { service }));
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
  serviceOfRun(run) === target.service;

/**
 * What resuming `run` changes: its unchanged items carry on with their keys;
 * items the job now describes differently take the new request when nothing
 * is in flight for them (nothing was paid), else their paid attempt is
 * finished as it was sent and a follow-up run makes them as the job now says;
 * items no longer in the job are dropped when never attempted.
 */
function resumePlan(
  journal: JournalReader,
  items: readonly JobItem[],
  run: RunRecord,
  options: DecideOptions,
): ResumePlan {
  const byKey = new Map(items.map((item) => [item.key, item]));
  const replace: NewItem[] = [];
  const drop: ItemRecord[] = [];
  const skip: ItemRecord[] = [];
  const changes: string[] = [];
  let deferred = 0;
  for (const record of journal.listItems(run.runId)) {
    if (record.stepId === TRAINING_STEP) continue;
    const item = byKey.get(record.itemKey);
    const terminal = isStateIn(TERMINAL_ITEM_STATES, record.state);
    const inFlight = () => journal.getOpenAttempt(run.runId, record.itemKey) !== undefined;
    if (!item) {
      if (record.attemptsUsed === 0) {
        drop.push(record);
        changes.push(`${record.stepId}/${record.label}: removed from the job file`);
      } else if (!terminal && !inFlight()) skip.push(record);
      continue;
    }
    const next = toNewItem(item, options.identity(item));
    if (next.requestHash === record.requestHash) continue;
    const fields = changedFields(record.request, item.request, record.modelId, item.modelId);
    changes.push(`${record.stepId}/${record.label}: ${fields.join(', ')} changed`);
    if (!terminal && !inFlight()) replace.push(next);
    else deferred += 1;
  }
  return { run, replace, drop, skip, deferred, changes };
}

export interface NextRunOptions extends RunScope {
  readonly fresh?: true | readonly string[];
  readonly runId?: string;
  /** The model contracts (which models have a seed a rejected item's remake changes). */
  readonly catalog?: ModelCatalog;
}

/** The next `run` of a job as `plan` quotes it. */
export interface NextRun extends RunDecision {
  /** What the next run does: resume the unfinished run, start a new one, or nothing. */
  readonly kind: 'resume' | 'new' | 'nothing';
  /**
   * The job items the next run pays for: what it makes, the resumed run's
   * items not charged yet (an interrupted create counts: it may not have
   * reached the service) and its changed items (made as the job now says).
   */
  readonly charged: readonly JobItem[];
  /** Job-local influencers it trains; the others are reused, or paid and in progress. */
  readonly trainingsToStart: readonly string[];
  /** Trainings it seeds that cost nothing: trained before on this account with this configuration. */
  readonly trainingsReused: number;
  /** Per step: items per verdict and items no longer in the job file. */
  readonly counts: ReadonlyMap<string, VerdictCounts>;
}

/** Influencer statuses whose training was paid: reused, or awaited without a new charge. */
const PAID_TRAINING: ReadonlySet<string> = new Set(['succeeded', 'queued', 'processing']);

/**
 * What the next `run` would do given the journal (`undefined`: none exists
 * yet), by exactly `run`'s rule. Reads only: `plan` opens the journal
 * read-only and takes no lock.
 */
export function nextRun(
  journal: JournalReader | undefined,
  job: LoadedJob,
  items: readonly JobItem[],
  files: PreparedFiles,
  options: NextRunOptions,
): NextRun {
  const reader = journal ?? NO_HISTORY;
  assertFreshSteps(options.fresh, job.steps);
  const decision = decideRun(reader, job, items, {
    service: options.service,
    scope: options.scope,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.fresh ? { fresh: freshSteps(options.fresh) } : {}),
    ...(options.catalog ? { catalog: options.catalog } : {}),
    identity: identityOf(job, files),
    trainings: (makes) => trainingsToSeed(reader, job, files, options.scope, makes),
  });
  const { state, resume } = decision;
  const notCharged: readonly string[] = [ITEM_STATE.pending, ITEM_STATE.submitting];
  const charged = items.filter((item) => {
    const verdict = state.verdicts.get(item.key) ?? 'new';
    if (VERDICTS_TO_MAKE.includes(verdict)) return true;
    return verdict === 'open' && notCharged.includes(state.latest.get(item.key)?.state ?? '');
  });
  // The trainings the run drives: those it seeds and those the resumed run holds.
  const driven = new Set(decision.trainings.map((t) => t.itemKey));
  if (resume) {
    for (const record of reader.listItems(resume.run.runId))
      if (record.stepId === TRAINING_STEP) driven.add(record.itemKey);
  }
  const trainingsToStart: string[] = [];
  let trainingsReused = 0;
  for (const spec of job.influencers.values()) {
    if (!driven.has(trainingItemKey(spec.id))) continue;
    const record = reader.findInfluencer({
      scope: options.scope,
      jobName: job.name,
      localId: spec.id,
      configHash: influencerConfigHash(job, files, spec),
    });
    if (record?.status === 'succeeded') trainingsReused += 1;
    else if (!record || !PAID_TRAINING.has(record.status)) trainingsToStart.push(spec.id);
  }
  const nothing = !resume && decision.makes.length === 0 && decision.trainings.length === 0;
  return {
    ...decision,
    kind: resume ? 'resume' : nothing ? 'nothing' : 'new',
    charged,
    trainingsToStart,
    trainingsReused,
    counts: verdictCounts(items, state),
  };
}
