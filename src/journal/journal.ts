/**
 * The journal handle the engine holds for a run's lifetime. Every method is
 * one synchronous operation from ops/ (SQL inline there); the multi-row ones
 * are single transactions. Reads parse rows into the zod records of
 * records.ts.
 */
import type Database from 'better-sqlite3';
import type { HeldLock } from './lock.js';
import { type AddItemsResult, addItems, type NewItem } from './ops/add-items.js';
import { addOutputs, type NewOutput } from './ops/add-outputs.js';
import { findAsset, type NewAsset, recordAsset } from './ops/assets.js';
import { type CreateRunInput, createRun } from './ops/create-run.js';
import { appendEvent, type EventQuery, listEvents, type NewEvent } from './ops/events.js';
import { getAttempt, getOpenAttempt, listAttempts, listOpenAttempts } from './ops/get-attempts.js';
import { getItem, type ItemFilter, listItems } from './ops/get-items.js';
import { findUnfinishedRun, getRun, listRuns } from './ops/get-run.js';
import {
  findInfluencer,
  type InfluencerLookup,
  type InfluencerUpdate,
  saveInfluencer,
} from './ops/influencers.js';
import {
  type DownloadedOutput,
  listOutputs,
  markOutputDownloaded,
  markOutputFailed,
} from './ops/outputs.js';
import { type RecentCreate, recentCreates } from './ops/recent-creates.js';
import { type AttemptIntentInput, recordAttemptIntent } from './ops/record-attempt-intent.js';
import { type AttemptOutcomeInput, recordAttemptOutcome } from './ops/record-attempt-outcome.js';
import {
  type AttemptSubmittedInput,
  recordAttemptSubmitted,
} from './ops/record-attempt-submitted.js';
import { committedCredits, releaseReservation, reserveCredits } from './ops/reserve-credits.js';
import { progressByStep, spendByStep, spendSummary } from './ops/summaries.js';
import { type ItemStateChange, setItemQuote, setItemState } from './ops/update-item.js';
import { setRunBudget, setRunNotBefore, setRunStatus } from './ops/update-run.js';
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
  createRun = (input: CreateRunInput) => createRun(this.#j, input);
  getRun = (runId: string) => getRun(this.#j, runId);
  /** The newest unfinished run of a job: what `ibatch run` resumes. */
  findUnfinishedRun = (jobName: string) => findUnfinishedRun(this.#j, jobName);
  listRuns = (jobName?: string, limit?: number) => listRuns(this.#j, jobName, limit);
  setRunStatus = (runId: string, status: RunStatus) => setRunStatus(this.#j, runId, status);
  /** Persists an account-wide wait so it survives a restart; null clears it. */
  setRunNotBefore = (runId: string, notBefore: number | null) =>
    setRunNotBefore(this.#j, runId, notBefore);
  setRunBudget = (runId: string, budget: number | null) => setRunBudget(this.#j, runId, budget);

  // Items
  addItems = (runId: string, items: readonly NewItem[]): AddItemsResult =>
    addItems(this.#j, runId, items);
  getItem = (runId: string, itemKey: string) => getItem(this.#j, runId, itemKey);
  listItems = (runId: string, filter?: ItemFilter) => listItems(this.#j, runId, filter);
  /** Items that failed for good, were blocked or skipped, with their error. */
  listFailures = (runId: string) => listItems(this.#j, runId, { states: FAILED_ITEM_STATES });
  setItemState = (runId: string, itemKey: string, change: ItemStateChange) =>
    setItemState(this.#j, runId, itemKey, change);
  setItemQuote = (runId: string, itemKey: string, quotedCost: number) =>
    setItemQuote(this.#j, runId, itemKey, quotedCost);

  // Budget
  reserveCredits = (runId: string, itemKey: string, amount: number) =>
    reserveCredits(this.#j, runId, itemKey, amount);
  releaseReservation = (runId: string, itemKey: string) =>
    releaseReservation(this.#j, runId, itemKey);
  committedCredits = (runId: string) => committedCredits(this.#j, runId);

  // Attempts (write-ahead: intent before the send, response before use)
  recordAttemptIntent = (input: AttemptIntentInput) => recordAttemptIntent(this.#j, input);
  recordAttemptSubmitted = (input: AttemptSubmittedInput) => recordAttemptSubmitted(this.#j, input);
  recordAttemptOutcome = (input: AttemptOutcomeInput) => recordAttemptOutcome(this.#j, input);
  getAttempt = (runId: string, itemKey: string, attemptNo: number) =>
    getAttempt(this.#j, runId, itemKey, attemptNo);
  getOpenAttempt = (runId: string, itemKey: string) => getOpenAttempt(this.#j, runId, itemKey);
  listOpenAttempts = (runId: string) => listOpenAttempts(this.#j, runId);
  listAttempts = (runId: string, itemKey: string) => listAttempts(this.#j, runId, itemKey);
  /** Creates attempted since `since` in any run of this journal (rate gate seeding). */
  recentCreates = (since: number): RecentCreate[] => recentCreates(this.#j, since);

  // Outputs
  addOutputs = (runId: string, itemKey: string, outputs: readonly NewOutput[]) =>
    addOutputs(this.#j, runId, itemKey, outputs);
  listOutputs = (runId: string, state?: OutputState) => listOutputs(this.#j, runId, state);
  markOutputDownloaded = (runId: string, itemKey: string, n: number, file: DownloadedOutput) =>
    markOutputDownloaded(this.#j, runId, itemKey, n, file);
  markOutputFailed = (runId: string, itemKey: string, n: number, error: string) =>
    markOutputFailed(this.#j, runId, itemKey, n, error);

  // Assets and influencers (reused across runs)
  findAsset = (scope: string, sha256: string) => findAsset(this.#j, scope, sha256);
  recordAsset = (asset: NewAsset) => recordAsset(this.#j, asset);
  findInfluencer = (key: InfluencerLookup) => findInfluencer(this.#j, key);
  saveInfluencer = (record: InfluencerUpdate) => saveInfluencer(this.#j, record);

  // Timeline and summaries
  appendEvent = (runId: string, event: NewEvent) => appendEvent(this.#j, runId, event);
  listEvents = (runId: string, query?: EventQuery) => listEvents(this.#j, runId, query);
  spendSummary = (runId: string) => spendSummary(this.#j, runId);
  spendByStep = (runId: string) => spendByStep(this.#j, runId);
  progressByStep = (runId: string) => progressByStep(this.#j, runId);

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
