/**
 * The journal handle the engine holds for a run's lifetime. Every method is
 * one synchronous operation from ops/ (SQL inline there); the multi-row ones
 * are single transactions. Reads parse rows into the zod records of
 * records.ts. Methods delegate to `ops.<same name>(this.store, ...)` (see
 * ops/index.ts), each through `guard` (journal-handle.ts), which turns the
 * disk failing into a JournalWriteError; they are prototype methods, not
 * bound properties, so wrap one in an arrow before passing it as a callback.
 */
import { JournalCopyConflictError } from './errors.js';
import { JournalHandle } from './journal-handle.js';
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
import { FAILED_ITEM_STATES, type ItemState, type OutputState, type RunStatus } from './records.js';

export class Journal extends JournalHandle {
  // Reviews
  /** Appends a review decision, committed at once. */
  recordReview(review: NewReview) {
    return this.guard(() => ops.recordReview(this.store, review));
  }
  /** The latest decision of each output and item of a job. */
  latestReviews(jobName: string) {
    return this.guard(() => ops.latestReviews(this.store, jobName));
  }

  // Deliveries
  /** The journal's last word on one delivered object, or undefined. */
  getDelivery(target: DeliveryTarget) {
    return this.guard(() => ops.getDelivery(this.store, target));
  }
  /** Records an object as `sending` (before the send) or `delivered`, committed at once. */
  recordDelivery(update: DeliveryUpdate) {
    return this.guard(() => ops.recordDelivery(this.store, update));
  }

  // Runs
  createRun(input: CreateRunInput) {
    return this.guard(() => ops.createRun(this.store, input));
  }
  getRun(runId: string) {
    return this.guard(() => ops.getRun(this.store, runId));
  }
  /** The newest unfinished run of a job: what `ibatch run` resumes. */
  findUnfinishedRun(jobName: string) {
    return this.guard(() => ops.findUnfinishedRun(this.store, jobName));
  }
  listRuns(jobName?: string, limit?: number) {
    return this.guard(() => ops.listRuns(this.store, jobName, limit));
  }
  setRunStatus(runId: string, status: RunStatus) {
    return this.guard(() => ops.setRunStatus(this.store, runId, status));
  }
  /** Persists an account-wide wait so it survives a restart; null clears it. */
  setRunNotBefore(runId: string, notBefore: number | null) {
    return this.guard(() => ops.setRunNotBefore(this.store, runId, notBefore));
  }
  /** `run --service-moved`: the run now spends on `service` (canonical) under `scope`. */
  setRunJobFacts(runId: string, facts: string) {
    return this.guard(() => ops.setRunJobFacts(this.store, runId, facts));
  }
  setRunService(runId: string, service: string, scope: string) {
    return this.guard(() => ops.setRunService(this.store, runId, service, scope));
  }
  setRunBudget(runId: string, budget: number | null) {
    return this.guard(() => ops.setRunBudget(this.store, runId, budget));
  }
  /** A resumed run takes the job file's current `tags:`. */
  setRunTags(runId: string, tags: Readonly<Record<string, string>>) {
    return this.guard(() => ops.setRunTags(this.store, runId, tags));
  }
  setRunOutputDir(runId: string, outputDir: string, host: string) {
    return this.guard(() => ops.setRunOutputDir(this.store, runId, outputDir, host));
  }
  /** Records items made before the journal was lost as one finished, uncharged run. */
  adoptRun(input: AdoptRunInput) {
    return this.guard(() => ops.adoptRun(this.store, input));
  }

  // Items
  addItems(runId: string, items: readonly NewItem[]): AddItemsResult {
    return this.guard(() => ops.addItems(this.store, runId, items));
  }
  getItem(runId: string, itemKey: string) {
    return this.guard(() => ops.getItem(this.store, runId, itemKey));
  }
  /** The records of `itemKeys` the run holds, by key (one read for a page of items). */
  getItemsOfKeys(runId: string, itemKeys: readonly string[]) {
    return this.guard(() => ops.getItemsOfKeys(this.store, runId, itemKeys));
  }
  /** Which of `itemKeys` are items of the run in `state`. */
  itemKeysInState(runId: string, itemKeys: readonly string[], state: ItemState) {
    return this.guard(() => ops.itemKeysInState(this.store, runId, itemKeys, state));
  }

  /** The latest record of each of the job's items on a service (the desired-state comparison). */
  latestItems(jobName: string, service: string, held?: HeldStrings) {
    return this.guard(() => ops.latestItems(this.store, jobName, service, held));
  }
  /** The state and attempts used of one item of one run on a service, if that run holds it. */
  recordedItemState(runId: string, itemKey: string, service: string) {
    return this.guard(() => ops.recordedItemState(this.store, runId, itemKey, service));
  }
  /** The keys of the items one run on a service shows succeeded. */
  succeededItemKeys(runId: string, service: string) {
    return this.guard(() => ops.succeededItemKeys(this.store, runId, service));
  }
  /** Each record of the job's items on a service as (key, request hash). */
  eachItemRequestHash(
    jobName: string,
    service: string,
    onRecord: (itemKey: string, requestHash: string) => void,
  ) {
    return this.guard(() => ops.eachItemRequestHash(this.store, jobName, service, onRecord));
  }
  /** A not yet sent item takes the job file's new request; false when an attempt is open. */
  replaceItemRequest(runId: string, item: NewItem) {
    return this.guard(() => ops.replaceItemRequest(this.store, runId, item));
  }
  /** Drops an item never attempted (removed from the job file). */
  removeUnattemptedItem(runId: string, itemKey: string) {
    return this.guard(() => ops.removeUnattemptedItem(this.store, runId, itemKey));
  }
  /** The keys of a run's first `limit` items not ended, in insertion order. */
  firstUnendedItemKeys(runId: string, limit: number) {
    return this.guard(() => ops.firstUnendedItemKeys(this.store, runId, limit));
  }
  /** Each item of a run as (key, step, request hash), in insertion order. */
  eachRunItemHash(runId: string, onItem: (item: RunItemHash) => void) {
    return this.guard(() => ops.eachRunItemHash(this.store, runId, onItem));
  }
  listItems(runId: string, filter?: ItemFilter) {
    return this.guard(() => ops.listItems(this.store, runId, filter));
  }
  /** Items that failed for good, were blocked or skipped, with their error. */
  listFailures(runId: string) {
    return this.guard(() => ops.listItems(this.store, runId, { states: FAILED_ITEM_STATES }));
  }
  setItemState(runId: string, itemKey: string, change: ItemStateChange) {
    return this.guard(() => ops.setItemState(this.store, runId, itemKey, change));
  }
  setItemQuote(runId: string, itemKey: string, quotedCost: number) {
    return this.guard(() => ops.setItemQuote(this.store, runId, itemKey, quotedCost));
  }

  // Budget
  reserveCredits(runId: string, itemKey: string, amount: number, cap?: RunSpendCap) {
    return this.guard(() => ops.reserveCredits(this.store, runId, itemKey, amount, cap));
  }
  releaseReservation(runId: string, itemKey: string) {
    return this.guard(() => ops.releaseReservation(this.store, runId, itemKey));
  }
  committedCredits(runId: string) {
    return this.guard(() => ops.committedCredits(this.store, runId));
  }

  // Attempts (write-ahead: intent before the send, response before use)
  recordAttemptIntent(input: AttemptIntentInput) {
    return this.guard(() => ops.recordAttemptIntent(this.store, input));
  }
  recordAttemptSubmitted(input: AttemptSubmittedInput) {
    return this.guard(() => ops.recordAttemptSubmitted(this.store, input));
  }
  recordAttemptOutcome(input: AttemptOutcomeInput) {
    return this.guard(() => ops.recordAttemptOutcome(this.store, input));
  }
  getAttempt(runId: string, itemKey: string, attemptNo: number) {
    return this.guard(() => ops.getAttempt(this.store, runId, itemKey, attemptNo));
  }
  getOpenAttempt(runId: string, itemKey: string) {
    return this.guard(() => ops.getOpenAttempt(this.store, runId, itemKey));
  }
  listOpenAttempts(runId: string) {
    return this.guard(() => ops.listOpenAttempts(this.store, runId));
  }
  listAttempts(runId: string, itemKey?: string) {
    return this.guard(() => ops.listAttempts(this.store, runId, itemKey));
  }
  /**
   * A run's items a page at a time, each with its outputs and attempt
   * outcomes (`ops.itemPagesWithRows`: the next page read while this one is
   * used). Read it inside one `snapshot`.
   */
  *itemPagesWithRows(runId: string, pageSize: number): Generator<ops.ItemPageWithRows> {
    const pages = ops.itemPagesWithRows(this.store, runId, pageSize);
    try {
      for (;;) {
        const page = this.guard(() => pages.next());
        if (page.done) return;
        yield page.value;
      }
    } finally {
      pages.return(undefined);
    }
  }
  /** Creates attempted since `since` in any run of this journal (rate gate seeding). */
  recentCreates(since: number): RecentCreate[] {
    return this.guard(() => ops.recentCreates(this.store, since));
  }

  // Moving history
  /**
   * Copies every run of this journal into `target`, in one transaction of
   * the target, after refusing if the target already holds one of its jobs.
   */
  copyInto(target: Journal) {
    return this.guard(() =>
      this.store.snapshot(() => {
        const clash = ops.jobsInBoth(this.store, target.store);
        if (clash.length > 0) throw new JournalCopyConflictError(target.path, clash);
        return ops.copyJournalRows(this.store, target.store);
      }),
    );
  }

  // Outputs
  addOutputs(runId: string, itemKey: string, outputs: readonly NewOutput[]) {
    return this.guard(() => ops.addOutputs(this.store, runId, itemKey, outputs));
  }
  /** `eachDownloadedFile`: a run's downloaded outputs' files with their owners, one at a time. */
  eachDownloadedFile(runId: string, visit: Parameters<typeof ops.eachDownloadedFile>[2]) {
    this.guard(() => ops.eachDownloadedFile(this.store, runId, visit));
  }

  listOutputs(runId: string, state?: OutputState, itemKey?: string) {
    return this.guard(() => ops.listOutputs(this.store, runId, state, itemKey));
  }
  /** The run's output files its manifest lists, lean (three columns each). */
  listOutputFiles(runId: string, itemKeys?: readonly string[]) {
    return this.guard(() => ops.listOutputFiles(this.store, runId, itemKeys));
  }
  /** Output files per step of a run (`listOutputFiles` counted). */
  countOutputFiles(runId: string) {
    return this.guard(() => ops.countOutputFiles(this.store, runId));
  }
  /** The outputs of some items of a run (a page of its items). */
  listOutputsOfItems(runId: string, itemKeys: readonly string[]) {
    return this.guard(() => ops.listOutputsOfItems(this.store, runId, itemKeys));
  }
  markOutputDownloaded(runId: string, itemKey: string, n: number, file: DownloadedOutput) {
    return this.guard(() => ops.markOutputDownloaded(this.store, runId, itemKey, n, file));
  }
  moveOutputFile(runId: string, itemKey: string, n: number, file: string) {
    return this.guard(() => ops.moveOutputFile(this.store, runId, itemKey, n, file));
  }
  markOutputFailed(runId: string, itemKey: string, n: number, error: string) {
    return this.guard(() => ops.markOutputFailed(this.store, runId, itemKey, n, error));
  }
  getOutput(runId: string, itemKey: string, n: number) {
    return this.guard(() => ops.getOutput(this.store, runId, itemKey, n));
  }
  findDownloadedOutput(generationId: string, runId: string) {
    return this.guard(() => ops.findDownloadedOutput(this.store, generationId, runId));
  }

  // Assets and influencers (reused across runs)
  findAsset(scope: string, sha256: string) {
    return this.guard(() => ops.findAsset(this.store, scope, sha256));
  }
  recordAsset(asset: NewAsset) {
    return this.guard(() => ops.recordAsset(this.store, asset));
  }
  /** Asset URLs the service at this base URL returned to any account here. */
  assetUrlsOfService(service: string) {
    return this.guard(() => ops.assetUrlsOfService(this.store, service));
  }
  /** The last charge for a training on this scope (service + account), if any. */
  lastTrainingCharge(scope: string) {
    return this.guard(() => ops.lastTrainingCharge(this.store, scope));
  }
  findInfluencer(key: InfluencerLookup) {
    return this.guard(() => ops.findInfluencer(this.store, key));
  }
  saveInfluencer(record: InfluencerUpdate) {
    return this.guard(() => ops.saveInfluencer(this.store, record));
  }
  /** Every training record of the job's influencers (any scope, any configuration). */
  listJobInfluencers(jobName: string) {
    return this.guard(() => ops.listJobInfluencers(this.store, jobName));
  }

  // Timeline and summaries
  appendEvent(runId: string, event: NewEvent) {
    return this.guard(() => ops.appendEvent(this.store, runId, event));
  }
  listEvents(runId: string, query?: EventQuery) {
    return this.guard(() => ops.listEvents(this.store, runId, query));
  }
  spendSummary(runId: string) {
    return this.guard(() => ops.spendSummary(this.store, runId));
  }
  /** Where a job stands against its `budget` over all its runs on one service base URL (the one home of "budget left"). */
  budgetStanding(job: BudgetedJob, service: string | null) {
    return this.guard(() => ops.budgetStanding(this.store, job, service));
  }
  /** Spend by job, step, tag or UTC day, from the charged attempts (`ibatch costs`). */
  costBreakdown(query: CostQuery) {
    return this.guard(() => ops.costBreakdown(this.store, query));
  }
  spendByStep(runId: string) {
    return this.guard(() => ops.spendByStep(this.store, runId));
  }
  progressByStep(runId: string) {
    return this.guard(() => ops.progressByStep(this.store, runId));
  }
  /** Items of a step that succeeded with no attempt of this run (a reused training). */
  countSucceededUnattempted(runId: string, stepId: string) {
    return this.guard(() => ops.countSucceededUnattempted(this.store, runId, stepId));
  }
}
