/**
 * The journal handle the engine holds for a run's lifetime. Every method is
 * one synchronous operation from ops/ (SQL inline there); the multi-row ones
 * are single transactions. Reads parse rows into the zod records of
 * records.ts. Methods delegate to `ops.<same name>(this.#j, ...)` (see
 * ops/index.ts), each through `#guard`, which turns the disk failing into a
 * JournalWriteError; they are prototype methods, not bound
 * properties, so wrap one in an arrow before passing it as a callback.
 */
import { JournalCopyConflictError, type JournalWriteError } from './errors.js';
import { journalFault } from './faults.js';
import type { AddItemsResult, NewItem } from './ops/add-items.js';
import type { NewOutput } from './ops/add-outputs.js';
import type { AdoptRunInput } from './ops/adopt-run.js';
import type { NewAsset } from './ops/assets.js';
import type { BudgetedJob } from './ops/budget-standing.js';
import type { CostQuery } from './ops/costs.js';
import type { CreateRunInput } from './ops/create-run.js';
import type { DeliveryTarget, DeliveryUpdate } from './ops/deliveries.js';
import type { EventQuery, NewEvent } from './ops/events.js';
import type { ItemFilter, RunItemHash } from './ops/get-items.js';
import * as ops from './ops/index.js';
import type { InfluencerLookup, InfluencerUpdate } from './ops/influencers.js';
import type { HeldStrings } from './ops/item-history.js';
import type { DownloadedOutput } from './ops/outputs.js';
import type { RecentCreate } from './ops/recent-creates.js';
import type { AttemptIntentInput } from './ops/record-attempt-intent.js';
import type { AttemptOutcomeInput } from './ops/record-attempt-outcome.js';
import type { AttemptSubmittedInput } from './ops/record-attempt-submitted.js';
import type { RunSpendCap } from './ops/reserve-credits.js';
import type { NewReview } from './ops/reviews.js';
import type { ItemStateChange } from './ops/update-item.js';
import { FAILED_ITEM_STATES, type OutputState, type RunStatus } from './records.js';
import type { JournalStore } from './sql.js';

/** What a writer holds while it runs its job: released when the journal closes. */
export interface JournalLock {
  release(): void;
}

export class Journal {
  /** Absolute path of the database file, or the PostgreSQL URL without its password. */
  readonly path: string;
  readonly readonly: boolean;
  readonly #j: JournalStore;
  readonly #lock: JournalLock | undefined;
  #closed = false;
  #fault: JournalWriteError | undefined;
  readonly #faultListeners = new Set<(fault: JournalWriteError) => void>();

  /** Use `openJournal`. */
  constructor(store: JournalStore, path: string, lock: JournalLock | undefined) {
    this.#j = store;
    this.path = path;
    this.#lock = lock;
    this.readonly = lock === undefined;
  }

  // Reviews
  /** Appends a review decision, committed at once. */
  recordReview(review: NewReview) {
    return this.#guard(() => ops.recordReview(this.#j, review));
  }
  /** The latest decision of each output and item of a job. */
  latestReviews(jobName: string) {
    return this.#guard(() => ops.latestReviews(this.#j, jobName));
  }

  // Deliveries
  /** The journal's last word on one delivered object, or undefined. */
  getDelivery(target: DeliveryTarget) {
    return this.#guard(() => ops.getDelivery(this.#j, target));
  }
  /** Records an object as `sending` (before the send) or `delivered`, committed at once. */
  recordDelivery(update: DeliveryUpdate) {
    return this.#guard(() => ops.recordDelivery(this.#j, update));
  }

  // Runs
  createRun(input: CreateRunInput) {
    return this.#guard(() => ops.createRun(this.#j, input));
  }
  getRun(runId: string) {
    return this.#guard(() => ops.getRun(this.#j, runId));
  }
  /** The newest unfinished run of a job: what `ibatch run` resumes. */
  findUnfinishedRun(jobName: string) {
    return this.#guard(() => ops.findUnfinishedRun(this.#j, jobName));
  }
  listRuns(jobName?: string, limit?: number) {
    return this.#guard(() => ops.listRuns(this.#j, jobName, limit));
  }
  setRunStatus(runId: string, status: RunStatus) {
    return this.#guard(() => ops.setRunStatus(this.#j, runId, status));
  }
  /** Persists an account-wide wait so it survives a restart; null clears it. */
  setRunNotBefore(runId: string, notBefore: number | null) {
    return this.#guard(() => ops.setRunNotBefore(this.#j, runId, notBefore));
  }
  /** `run --service-moved`: the run now spends on `service` (canonical) under `scope`. */
  setRunJobFacts(runId: string, facts: string) {
    return this.#guard(() => ops.setRunJobFacts(this.#j, runId, facts));
  }
  setRunService(runId: string, service: string, scope: string) {
    return this.#guard(() => ops.setRunService(this.#j, runId, service, scope));
  }
  setRunBudget(runId: string, budget: number | null) {
    return this.#guard(() => ops.setRunBudget(this.#j, runId, budget));
  }
  /** A resumed run takes the job file's current `tags:`. */
  setRunTags(runId: string, tags: Readonly<Record<string, string>>) {
    return this.#guard(() => ops.setRunTags(this.#j, runId, tags));
  }
  setRunOutputDir(runId: string, outputDir: string, host: string) {
    return this.#guard(() => ops.setRunOutputDir(this.#j, runId, outputDir, host));
  }
  /** Records items made before the journal was lost as one finished, uncharged run. */
  adoptRun(input: AdoptRunInput) {
    return this.#guard(() => ops.adoptRun(this.#j, input));
  }

  // Items
  addItems(runId: string, items: readonly NewItem[]): AddItemsResult {
    return this.#guard(() => ops.addItems(this.#j, runId, items));
  }
  getItem(runId: string, itemKey: string) {
    return this.#guard(() => ops.getItem(this.#j, runId, itemKey));
  }
  /** The latest record of each of the job's items on a service (the desired-state comparison). */
  latestItems(jobName: string, service: string, held?: HeldStrings) {
    return this.#guard(() => ops.latestItems(this.#j, jobName, service, held));
  }
  /** The state and attempts used of one item of one run on a service, if that run holds it. */
  recordedItemState(runId: string, itemKey: string, service: string) {
    return this.#guard(() => ops.recordedItemState(this.#j, runId, itemKey, service));
  }
  /** The keys of the items one run on a service shows succeeded. */
  succeededItemKeys(runId: string, service: string) {
    return this.#guard(() => ops.succeededItemKeys(this.#j, runId, service));
  }
  /** Each record of the job's items on a service as (key, request hash). */
  eachItemRequestHash(
    jobName: string,
    service: string,
    onRecord: (itemKey: string, requestHash: string) => void,
  ) {
    return this.#guard(() => ops.eachItemRequestHash(this.#j, jobName, service, onRecord));
  }
  /** A not yet sent item takes the job file's new request; false when an attempt is open. */
  replaceItemRequest(runId: string, item: NewItem) {
    return this.#guard(() => ops.replaceItemRequest(this.#j, runId, item));
  }
  /** Drops an item never attempted (removed from the job file). */
  removeUnattemptedItem(runId: string, itemKey: string) {
    return this.#guard(() => ops.removeUnattemptedItem(this.#j, runId, itemKey));
  }
  /** The keys of a run's first `limit` items not ended, in insertion order. */
  firstUnendedItemKeys(runId: string, limit: number) {
    return this.#guard(() => ops.firstUnendedItemKeys(this.#j, runId, limit));
  }
  /** Each item of a run as (key, step, request hash), in insertion order. */
  eachRunItemHash(runId: string, onItem: (item: RunItemHash) => void) {
    return this.#guard(() => ops.eachRunItemHash(this.#j, runId, onItem));
  }
  listItems(runId: string, filter?: ItemFilter) {
    return this.#guard(() => ops.listItems(this.#j, runId, filter));
  }
  /** Items that failed for good, were blocked or skipped, with their error. */
  listFailures(runId: string) {
    return this.#guard(() => ops.listItems(this.#j, runId, { states: FAILED_ITEM_STATES }));
  }
  setItemState(runId: string, itemKey: string, change: ItemStateChange) {
    return this.#guard(() => ops.setItemState(this.#j, runId, itemKey, change));
  }
  setItemQuote(runId: string, itemKey: string, quotedCost: number) {
    return this.#guard(() => ops.setItemQuote(this.#j, runId, itemKey, quotedCost));
  }

  // Budget
  reserveCredits(runId: string, itemKey: string, amount: number, cap?: RunSpendCap) {
    return this.#guard(() => ops.reserveCredits(this.#j, runId, itemKey, amount, cap));
  }
  releaseReservation(runId: string, itemKey: string) {
    return this.#guard(() => ops.releaseReservation(this.#j, runId, itemKey));
  }
  committedCredits(runId: string) {
    return this.#guard(() => ops.committedCredits(this.#j, runId));
  }

  // Attempts (write-ahead: intent before the send, response before use)
  recordAttemptIntent(input: AttemptIntentInput) {
    return this.#guard(() => ops.recordAttemptIntent(this.#j, input));
  }
  recordAttemptSubmitted(input: AttemptSubmittedInput) {
    return this.#guard(() => ops.recordAttemptSubmitted(this.#j, input));
  }
  recordAttemptOutcome(input: AttemptOutcomeInput) {
    return this.#guard(() => ops.recordAttemptOutcome(this.#j, input));
  }
  getAttempt(runId: string, itemKey: string, attemptNo: number) {
    return this.#guard(() => ops.getAttempt(this.#j, runId, itemKey, attemptNo));
  }
  getOpenAttempt(runId: string, itemKey: string) {
    return this.#guard(() => ops.getOpenAttempt(this.#j, runId, itemKey));
  }
  listOpenAttempts(runId: string) {
    return this.#guard(() => ops.listOpenAttempts(this.#j, runId));
  }
  listAttempts(runId: string, itemKey?: string) {
    return this.#guard(() => ops.listAttempts(this.#j, runId, itemKey));
  }
  /** The attempts of some items of a run (a page of its items), by item. */
  listAttemptsOfItems(runId: string, itemKeys: readonly string[]) {
    return this.#guard(() => ops.listAttemptsOfItems(this.#j, runId, itemKeys));
  }
  /** Creates attempted since `since` in any run of this journal (rate gate seeding). */
  recentCreates(since: number): RecentCreate[] {
    return this.#guard(() => ops.recentCreates(this.#j, since));
  }

  // Moving history
  /**
   * Copies every run of this journal into `target`, in one transaction of
   * the target, after refusing if the target already holds one of its jobs.
   */
  copyInto(target: Journal) {
    return this.#guard(() =>
      this.#j.snapshot(() => {
        const clash = ops.jobsInBoth(this.#j, target.#j);
        if (clash.length > 0) throw new JournalCopyConflictError(target.path, clash);
        return ops.copyJournalRows(this.#j, target.#j);
      }),
    );
  }

  // Outputs
  addOutputs(runId: string, itemKey: string, outputs: readonly NewOutput[]) {
    return this.#guard(() => ops.addOutputs(this.#j, runId, itemKey, outputs));
  }
  /** `eachDownloadedFile`: a run's downloaded outputs' files with their owners, one at a time. */
  eachDownloadedFile(runId: string, visit: Parameters<typeof ops.eachDownloadedFile>[2]) {
    this.#guard(() => ops.eachDownloadedFile(this.#j, runId, visit));
  }

  listOutputs(runId: string, state?: OutputState, itemKey?: string) {
    return this.#guard(() => ops.listOutputs(this.#j, runId, state, itemKey));
  }
  /** The run's output files its manifest lists, lean (three columns each). */
  listOutputFiles(runId: string) {
    return this.#guard(() => ops.listOutputFiles(this.#j, runId));
  }
  /** The outputs of some items of a run (a page of its items). */
  listOutputsOfItems(runId: string, itemKeys: readonly string[]) {
    return this.#guard(() => ops.listOutputsOfItems(this.#j, runId, itemKeys));
  }
  markOutputDownloaded(runId: string, itemKey: string, n: number, file: DownloadedOutput) {
    return this.#guard(() => ops.markOutputDownloaded(this.#j, runId, itemKey, n, file));
  }
  moveOutputFile(runId: string, itemKey: string, n: number, file: string) {
    return this.#guard(() => ops.moveOutputFile(this.#j, runId, itemKey, n, file));
  }
  markOutputFailed(runId: string, itemKey: string, n: number, error: string) {
    return this.#guard(() => ops.markOutputFailed(this.#j, runId, itemKey, n, error));
  }
  getOutput(runId: string, itemKey: string, n: number) {
    return this.#guard(() => ops.getOutput(this.#j, runId, itemKey, n));
  }
  findDownloadedOutput(generationId: string, runId: string) {
    return this.#guard(() => ops.findDownloadedOutput(this.#j, generationId, runId));
  }

  // Assets and influencers (reused across runs)
  findAsset(scope: string, sha256: string) {
    return this.#guard(() => ops.findAsset(this.#j, scope, sha256));
  }
  recordAsset(asset: NewAsset) {
    return this.#guard(() => ops.recordAsset(this.#j, asset));
  }
  /** Asset URLs the service at this base URL returned to any account here. */
  assetUrlsOfService(service: string) {
    return this.#guard(() => ops.assetUrlsOfService(this.#j, service));
  }
  /** The last charge for a training on this scope (service + account), if any. */
  lastTrainingCharge(scope: string) {
    return this.#guard(() => ops.lastTrainingCharge(this.#j, scope));
  }
  findInfluencer(key: InfluencerLookup) {
    return this.#guard(() => ops.findInfluencer(this.#j, key));
  }
  saveInfluencer(record: InfluencerUpdate) {
    return this.#guard(() => ops.saveInfluencer(this.#j, record));
  }
  /** Every training record of the job's influencers (any scope, any configuration). */
  listJobInfluencers(jobName: string) {
    return this.#guard(() => ops.listJobInfluencers(this.#j, jobName));
  }

  // Timeline and summaries
  appendEvent(runId: string, event: NewEvent) {
    return this.#guard(() => ops.appendEvent(this.#j, runId, event));
  }
  listEvents(runId: string, query?: EventQuery) {
    return this.#guard(() => ops.listEvents(this.#j, runId, query));
  }
  spendSummary(runId: string) {
    return this.#guard(() => ops.spendSummary(this.#j, runId));
  }
  /** Where a job stands against its `budget` over all its runs on one service base URL (the one home of "budget left"). */
  budgetStanding(job: BudgetedJob, service: string | null) {
    return this.#guard(() => ops.budgetStanding(this.#j, job, service));
  }
  /** Spend by job, step, tag or UTC day, from the charged attempts (`ibatch costs`). */
  costBreakdown(query: CostQuery) {
    return this.#guard(() => ops.costBreakdown(this.#j, query));
  }
  spendByStep(runId: string) {
    return this.#guard(() => ops.spendByStep(this.#j, runId));
  }
  progressByStep(runId: string) {
    return this.#guard(() => ops.progressByStep(this.#j, runId));
  }
  /** Items of a step that succeeded with no attempt of this run (a reused training). */
  countSucceededUnattempted(runId: string, stepId: string) {
    return this.#guard(() => ops.countSucceededUnattempted(this.#j, runId, stepId));
  }

  /**
   * Runs `fn` as one read of the journal: every read inside sees the same
   * state (a WAL snapshot), whatever another process commits meanwhile. For
   * reads made in several passes (the manifest's rebuild) that must agree.
   */
  snapshot<T>(fn: () => T): T {
    // Only the snapshot's begin and end are this journal's to judge: what `fn`
    // throws (a full output disk while the manifest is written) stays its own
    // error, and the journal's reads inside it are guarded on their own.
    const outcome = this.#guard(() =>
      this.#j.snapshot((): { value: T } | { error: unknown } => {
        try {
          return { value: fn() };
        } catch (error) {
          return { error };
        }
      }),
    );
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  /** Runs `fn` in one immediate transaction (several ops that must commit together). */
  transaction<T>(fn: () => T): T {
    return this.#guard(() => this.#j.transaction(fn));
  }

  /**
   * A number that changes whenever another connection (another process: a
   * `run`, `reject`) has committed to the journal since this one last looked
   * (`PRAGMA data_version`); this connection's own commits leave it alone.
   * Lets a long-lived reader keep what it built until the journal changes.
   */
  changeCount(): number {
    return this.#guard(() => this.#j.changeCount());
  }

  /** `PRAGMA integrity_check` result: `['ok']` when healthy. */
  integrityCheck(): string[] {
    return this.#guard(() => this.#j.integrityCheck());
  }

  /**
   * The first time the journal's disk failed (full, read-only, I/O error):
   * the run must stop, since nothing more can be recorded before it is sent.
   * Stays set: later failures are its consequences.
   */
  get fault(): JournalWriteError | undefined {
    return this.#fault;
  }

  /** Calls `listener` at the first fault (see `fault`); returns a disposer. */
  onFault(listener: (fault: JournalWriteError) => void): () => void {
    this.#faultListeners.add(listener);
    return () => this.#faultListeners.delete(listener);
  }

  /** Runs one operation; a failure of the disk becomes a JournalWriteError naming the journal. */
  #guard<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      // A reader (`status`, `report`) writes nothing: its errors stay as they are.
      const fault = this.readonly ? undefined : journalFault(error, this.path, 'run');
      if (!fault) throw error;
      if (!this.#fault) {
        this.#fault = fault;
        for (const listener of this.#faultListeners) {
          try {
            listener(fault);
          } catch {
            // A listener failing (it may write to this journal) must not hide the fault.
          }
        }
      }
      throw fault;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the database and releases the lock. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#j.close();
    } finally {
      this.#lock?.release();
    }
  }
}
