/**
 * What the next `ibatch run` of a job does, decided without writing a thing:
 * which unfinished run it resumes and what that resume changes, which items
 * it makes (the desired-state verdicts of src/plan/desired-state.ts) and which
 * trainings it seeds. `selectRun` (select-run.ts) carries the decision out;
 * `plan` quotes it (`nextRun`). One rule for both, so a quote is what the run
 * then does.
 */
import type { InfluencerRef, JobItem, LoadedJob, ModelCatalog } from '../../job/index.js';
import {
  FINISHED_RUN_STATUSES,
  type HeldStrings,
  ITEM_STATE,
  type NewItem,
  type RunRecord,
} from '../../journal/index.js';
import {
  type DesiredState,
  desiredState,
  VERDICTS_TO_MAKE,
  type VerdictCounts,
  verdictCounts,
  type WantedItem,
} from '../../plan/index.js';
import { UsageError } from '../../shared/index.js';
import { assertFreshSteps, freshSteps } from './fresh.js';
import type { PreparedFiles } from './input-files.js';
import {
  influencerConfigHash,
  TRAINING_STEP,
  trainingItemKey,
  trainingsToSeed,
} from './item-identity.js';
import { Rejections } from './remake.js';
import { type ResumePlan, resumePlan } from './resume-plan.js';
import {
  type JournalReader,
  NO_HISTORY,
  newestRunOnService,
  outputIdsReader,
  type RunScope,
  runIdFamily,
  scopedLatest,
} from './run-history.js';
import { assertSameService } from './service-move.js';
import { jobItemsOf, wholeItem } from './whole-items.js';

/**
 * What the decision needs of a job item: a `JobItem`, or the lean record a
 * plan of a 100,000-row job keeps instead (plan-items.ts).
 */
export interface DecisionItem extends WantedItem {
  readonly influencer?: InfluencerRef;
}

export interface DecideOptions<T extends DecisionItem = JobItem> extends RunScope {
  readonly runId?: string;
  /** `--fresh`: steps whose done items are made again; `true` for all. */
  readonly fresh?: ReadonlySet<string> | true;
  /** `--service-moved`: the job's unfinished run on another service is resumed on this one. */
  readonly serviceMoved?: boolean;
  /** Runs this invocation already finished (their failures wait for the next one). */
  readonly settledRuns?: ReadonlySet<string>;
  /** The model contracts: a rejected item is remade with a new seed where its model has one. */
  readonly catalog?: ModelCatalog;
  /** An item's identity hash (item-identity.ts). */
  readonly identity: (item: T) => string;
  /** The trainings a new or resumed run needs as journal items. */
  readonly trainings: (makes: readonly DecisionItem[]) => readonly NewItem[];
  /**
   * The job file's whole items of these keys, asked for (once, only when
   * there are any) where the decision needs more than a `DecisionItem`: a
   * rejected item's remake and a resumed run's changed items.
   */
  readonly jobItems: (keys: ReadonlySet<string>) => ReadonlyMap<string, JobItem>;
  /** Strings the items hold that the journal's records may share (plan-items.ts). */
  readonly held?: () => HeldStrings;
}

/**
 * The core of the next run that `run` and `plan` share: `selectRun` writes
 * it, `nextRun` adds what the quote needs (`NextRun`).
 */
export interface RunDecision<T extends DecisionItem = JobItem> {
  readonly state: DesiredState;
  /**
   * Job items the run adds: new, changed, retry, rejected, fresh (not those
   * the resumed run holds). A rejected item is the job file's whole item
   * carrying its remade request (new seed, edited prompt; remake.ts); its
   * identity is the job file's item's.
   */
  readonly makes: readonly (T | JobItem)[];
  /** Training items the run seeds. */
  readonly trainings: readonly NewItem[];
  /** Present when the next run resumes the job's unfinished run. */
  readonly resume: ResumePlan | undefined;
}

/**
 * Decides the next run, reading only: the unfinished run of the job is resumed (its keys
 * are the ones in flight) and given whatever else is missing; otherwise a new
 * run would hold only what is missing; nothing at all when nothing is.
 */
export function decideRun<T extends DecisionItem>(
  journal: JournalReader,
  job: LoadedJob,
  items: readonly T[],
  options: DecideOptions<T>,
): RunDecision<T> {
  const latest = scopedLatest(journal, job.name, options, options.held?.());
  const open = openRunOf(journal, job, options);
  const rejections = new Rejections(journal.latestReviews(job.name));
  const state = desiredState(latest, items, {
    requestHash: options.identity,
    ...(open ? { openRunId: open.runId } : {}),
    ...(options.fresh ? { fresh: options.fresh } : {}),
    ...(options.settledRuns ? { settledRuns: options.settledRuns } : {}),
    outputIds: outputIdsReader(journal),
    rejected: (runId, itemKey) => rejections.has(runId, itemKey),
  });
  const makes: (T | JobItem)[] = [];
  // Rejected items are remade from their whole item (their run by key), in place.
  const rejected = new Map<string, { at: number; runId: string }>();
  for (const item of items) {
    const verdict = state.verdicts.get(item.key) ?? 'new';
    if (!VERDICTS_TO_MAKE.includes(verdict)) continue;
    const latest = state.latest.get(item.key);
    if (open && latest?.runId === open.runId) continue;
    if (verdict === 'rejected' && latest)
      rejected.set(item.key, { at: makes.length, runId: latest.runId });
    makes.push(item);
  }
  const whole = jobItemsOf(new Set(rejected.keys()), options);
  for (const [key, { at, runId }] of rejected)
    makes[at] = rejections.remake(wholeItem(whole, key), runId, options.catalog);
  return {
    state,
    makes,
    trainings: options.trainings(makes),
    resume: open ? resumePlan(journal, items, open, options, latest) : undefined,
  };
}

/** The run a `run` resumes: `--run-id`'s when unfinished, else the job's newest run when unfinished. */
function openRunOf(
  journal: JournalReader,
  job: LoadedJob,
  options: Pick<DecideOptions<DecisionItem>, keyof RunScope | 'runId' | 'serviceMoved'>,
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
    // Named, it is resumed whatever service it talked to (docs/ci.md): naming it says where it goes on.
    return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
  }
  const elsewhere = assertSameService(journal, job.name, options, {
    moved: options.serviceMoved ?? false,
  });
  if (elsewhere) return elsewhere;
  // Only the job's newest run on this service is resumed: another
  // service's ids mean nothing here (an in-process emulator is a new service
  // at every start), and an older unfinished run was left behind on purpose.
  // `--fresh` resumes it too (what it paid for is finished, not paid again)
  // and adds the fresh items to it.
  // An adopted run records another journal's work: the run before it is still the one to resume.
  const newest = newestRunOnService(journal, job.name, options.service, { started: true });
  return newest && !FINISHED_RUN_STATUSES.includes(newest.status) ? newest : undefined;
}

export interface NextRunOptions<T extends DecisionItem>
  extends RunScope,
    Pick<DecideOptions<T>, 'identity' | 'jobItems' | 'held'> {
  readonly fresh?: true | readonly string[];
  readonly runId?: string;
  readonly serviceMoved?: boolean;
  /** The model contracts (which models have a seed a rejected item's remake changes). */
  readonly catalog?: ModelCatalog;
}

/** The next `run` of a job as `plan` quotes it. */
export interface NextRun<T extends DecisionItem> extends RunDecision<T> {
  /** What the next run does: resume the unfinished run, start a new one, or nothing. */
  readonly kind: 'resume' | 'new' | 'nothing';
  /**
   * The job items the next run pays for: what it makes, the resumed run's
   * items not charged yet (an interrupted create counts: it may not have
   * reached the service) and its changed items (made as the job now says).
   */
  readonly charged: readonly T[];
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
export function nextRun<T extends DecisionItem>(
  journal: JournalReader | undefined,
  job: LoadedJob,
  items: readonly T[],
  files: PreparedFiles,
  options: NextRunOptions<T>,
): NextRun<T> {
  const reader = journal ?? NO_HISTORY;
  assertFreshSteps(options.fresh, job.steps);
  const decision = decideRun(reader, job, items, {
    service: options.service,
    scope: options.scope,
    ...(options.runId !== undefined ? { runId: options.runId } : {}),
    ...(options.serviceMoved ? { serviceMoved: true } : {}),
    ...(options.fresh ? { fresh: freshSteps(options.fresh) } : {}),
    ...(options.catalog ? { catalog: options.catalog } : {}),
    identity: options.identity,
    jobItems: options.jobItems,
    ...(options.held ? { held: options.held } : {}),
    trainings: (makes) => trainingsToSeed(job, makes),
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
    // Its trainings only: listing all 20,000 items of a resumed run parsed every request.
    for (const record of reader.listItems(resume.run.runId, { stepId: TRAINING_STEP }))
      driven.add(record.itemKey);
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
