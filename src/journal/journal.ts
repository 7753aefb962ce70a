/**
 * The journal handle the engine holds for a run's lifetime. Every method is
 * one synchronous operation from ops/ (SQL inline there); the multi-row ones
 * are single transactions. Reads parse rows into the zod records of
 * records.ts. Methods delegate to `ops.<same name>(this.#j, ...)` (see
 * ops/index.ts); they are prototype methods, not bound properties, so wrap
 * one in an arrow before passing it as a callback.
 */
import type Database from 'better-sqlite3';
import type { HeldLock } from './lock.js';
import type { AddItemsResult, NewItem } from './ops/add-items.js';
import type { NewOutput } from './ops/add-outputs.js';
import type { AdoptRunInput } from './ops/adopt-run.js';
import type { NewAsset } from './ops/assets.js';
import type { CreateRunInput } from './ops/create-run.js';
import type { EventQuery, NewEvent } from './ops/events.js';
import type { ItemFilter } from './ops/get-items.js';
import * as ops from './ops/index.js';
import type { InfluencerLookup, InfluencerUpdate } from './ops/influencers.js';
import type { DownloadedOutput } from './ops/outputs.js';
import type { RecentCreate } from './ops/recent-creates.js';
import type { AttemptIntentInput } from './ops/record-attempt-intent.js';
import type { AttemptOutcomeInput } from './ops/record-attempt-outcome.js';
import type { AttemptSubmittedInput } from './ops/record-attempt-submitted.js';
import type { RunSpendCap } from './ops/reserve-credits.js';
import type { ItemStateChange } from './ops/update-item.js';
import { FAILED_ITEM_STATES, type OutputState, type RunStatus } from './records.js';
import { createJournalDb, type JournalDb } from './sql.js';

export class Journal {
  /** Absolute path of the database file. */
  readonly path: string;
  readonly readonly: boolean;
  readonly #j: JournalDb;
  readonly #lock: HeldLock | undefined;
  #closed = false;

  /** Use `openJournal`. */
  constructor(db: Database.Database, path: string, lock: HeldLock | undefined, now?: () => number) {
    this.#j = createJournalDb(db, now);
    this.path = path;
    this.#lock = lock;
    this.readonly = lock === undefined;
  }

  // Runs
  createRun(input: CreateRunInput) {
    return ops.createRun(this.#j, input);
  }
  getRun(runId: string) {
    return ops.getRun(this.#j, runId);
  }
  /** The newest unfinished run of a job: what `ibatch run` resumes. */
  findUnfinishedRun(jobName: string) {
    return ops.findUnfinishedRun(this.#j, jobName);
  }
  listRuns(jobName?: string, limit?: number) {
    return ops.listRuns(this.#j, jobName, limit);
  }
  setRunStatus(runId: string, status: RunStatus) {
    return ops.setRunStatus(this.#j, runId, status);
  }
  /** Persists an account-wide wait so it survives a restart; null clears it. */
  setRunNotBefore(runId: string, notBefore: number | null) {
    return ops.setRunNotBefore(this.#j, runId, notBefore);
  }
  setRunBudget(runId: string, budget: number | null) {
    return ops.setRunBudget(this.#j, runId, budget);
  }
  /** Records items made before the journal was lost as one finished, uncharged run. */
  adoptRun(input: AdoptRunInput) {
    return ops.adoptRun(this.#j, input);
  }

  // Items
  addItems(runId: string, items: readonly NewItem[]): AddItemsResult {
    return ops.addItems(this.#j, runId, items);
  }
  getItem(runId: string, itemKey: string) {
    return ops.getItem(this.#j, runId, itemKey);
  }
  /** The job's items over all its runs, oldest run first (the desired-state comparison). */
  itemHistory(jobName: string) {
    return ops.itemHistory(this.#j, jobName);
  }
  /** A not yet sent item takes the job file's new request; false when an attempt is open. */
  replaceItemRequest(runId: string, item: NewItem) {
    return ops.replaceItemRequest(this.#j, runId, item);
  }
  /** Drops an item never attempted (removed from the job file). */
  removeUnattemptedItem(runId: string, itemKey: string) {
    return ops.removeUnattemptedItem(this.#j, runId, itemKey);
  }
  listItems(runId: string, filter?: ItemFilter) {
    return ops.listItems(this.#j, runId, filter);
  }
  /** Items that failed for good, were blocked or skipped, with their error. */
  listFailures(runId: string) {
    return ops.listItems(this.#j, runId, { states: FAILED_ITEM_STATES });
  }
  setItemState(runId: string, itemKey: string, change: ItemStateChange) {
    return ops.setItemState(this.#j, runId, itemKey, change);
  }
  setItemQuote(runId: string, itemKey: string, quotedCost: number) {
    return ops.setItemQuote(this.#j, runId, itemKey, quotedCost);
  }

  // Budget
  reserveCredits(runId: string, itemKey: string, amount: number, cap?: RunSpendCap) {
    return ops.reserveCredits(this.#j, runId, itemKey, amount, cap);
  }
  releaseReservation(runId: string, itemKey: string) {
    return ops.releaseReservation(this.#j, runId, itemKey);
  }
  committedCredits(runId: string) {
    return ops.committedCredits(this.#j, runId);
  }
  /** Committed credits of every run of the run's job on its account: what `budget` caps. */
  jobCommittedCredits(runId: string) {
    return ops.jobCommittedCredits(this.#j, runId);
  }

  // Attempts (write-ahead: intent before the send, response before use)
  recordAttemptIntent(input: AttemptIntentInput) {
    return ops.recordAttemptIntent(this.#j, input);
  }
  recordAttemptSubmitted(input: AttemptSubmittedInput) {
    return ops.recordAttemptSubmitted(this.#j, input);
  }
  recordAttemptOutcome(input: AttemptOutcomeInput) {
    return ops.recordAttemptOutcome(this.#j, input);
  }
  getAttempt(runId: string, itemKey: string, attemptNo: number) {
    return ops.getAttempt(this.#j, runId, itemKey, attemptNo);
  }
  getOpenAttempt(runId: string, itemKey: string) {
    return ops.getOpenAttempt(this.#j, runId, itemKey);
  }
  listOpenAttempts(runId: string) {
    return ops.listOpenAttempts(this.#j, runId);
  }
  listAttempts(runId: string, itemKey: string) {
    return ops.listAttempts(this.#j, runId, itemKey);
  }
  /** Creates attempted since `since` in any run of this journal (rate gate seeding). */
  recentCreates(since: number): RecentCreate[] {
    return ops.recentCreates(this.#j, since);
  }

  // Outputs
  addOutputs(runId: string, itemKey: string, outputs: readonly NewOutput[]) {
    return ops.addOutputs(this.#j, runId, itemKey, outputs);
  }
  listOutputs(runId: string, state?: OutputState) {
    return ops.listOutputs(this.#j, runId, state);
  }
  markOutputDownloaded(runId: string, itemKey: string, n: number, file: DownloadedOutput) {
    return ops.markOutputDownloaded(this.#j, runId, itemKey, n, file);
  }
  markOutputFailed(runId: string, itemKey: string, n: number, error: string) {
    return ops.markOutputFailed(this.#j, runId, itemKey, n, error);
  }
  getOutput(runId: string, itemKey: string, n: number) {
    return ops.getOutput(this.#j, runId, itemKey, n);
  }
  findDownloadedOutput(generationId: string, runId: string) {
    return ops.findDownloadedOutput(this.#j, generationId, runId);
  }

  // Assets and influencers (reused across runs)
  findAsset(scope: string, sha256: string) {
    return ops.findAsset(this.#j, scope, sha256);
  }
  recordAsset(asset: NewAsset) {
    return ops.recordAsset(this.#j, asset);
  }
  /** The last charge for a training on this scope (service + account), if any. */
  lastTrainingCharge(scope: string) {
    return ops.lastTrainingCharge(this.#j, scope);
  }
  findInfluencer(key: InfluencerLookup) {
    return ops.findInfluencer(this.#j, key);
  }
  saveInfluencer(record: InfluencerUpdate) {
    return ops.saveInfluencer(this.#j, record);
  }

  // Timeline and summaries
  appendEvent(runId: string, event: NewEvent) {
    return ops.appendEvent(this.#j, runId, event);
  }
  listEvents(runId: string, query?: EventQuery) {
    return ops.listEvents(this.#j, runId, query);
  }
  spendSummary(runId: string) {
    return ops.spendSummary(this.#j, runId);
  }
  /** Spend of every run of a job on one scope (service + account): what its `budget` caps. */
  jobSpend(jobName: string, service: string | null) {
    return ops.jobSpend(this.#j, jobName, service);
  }
  spendByStep(runId: string) {
    return ops.spendByStep(this.#j, runId);
  }
  progressByStep(runId: string) {
    return ops.progressByStep(this.#j, runId);
  }

  /** Runs `fn` in one immediate transaction (several ops that must commit together). */
  transaction<T>(fn: () => T): T {
    return this.#j.db.transaction(fn).immediate();
  }

  /** `PRAGMA integrity_check` result: `['ok']` when healthy. */
  integrityCheck(): string[] {
    const rows = this.#j.db.pragma('integrity_check') as { integrity_check: string }[];
    return rows.map((row) => row.integrity_check);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the database and releases the lock. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.#j.db.close();
    } finally {
      this.#lock?.release();
    }
  }
}
