/**
 * @module journal
 * The durable record of runs: a better-sqlite3 database (WAL, synchronous
 * FULL), or a PostgreSQL one shared by a team (postgres/), with one lock per
 * job (one process runs a job at a time); its lock also serves the output
 * folder's per-job lock. The engine commits each attempt's intent
 * before sending it and each response before acting on it, so a run killed at
 * any instant resumes without paying twice. See docs/journal.md.
 */

export * from './errors.js';
export { journalFiles, lockFileName, lockPathFor } from './identity.js';
export { Journal } from './journal.js';
export {
  type IdempotencyKeyParts,
  idempotencyKey,
  newRunId,
} from './keys.js';
export { acquireLock, type HeldLock, type LockOptions, withLockSync } from './lock.js';
export { LATEST_SCHEMA_VERSION } from './migrations/index.js';
export {
  journalWritable,
  type OpenJournalOptions,
  openJournal,
  openJournalIfAny,
} from './open.js';
export type { AddItemsResult, NewItem } from './ops/add-items.js';
export type { NewOutput } from './ops/add-outputs.js';
export type { AdoptedItem, AdoptRunInput } from './ops/adopt-run.js';
export type { NewAsset } from './ops/assets.js';
export type { BudgetedJob, BudgetStanding } from './ops/budget-standing.js';
export type {
  CostBreakdown,
  CostFigures,
  CostGroup,
  CostGrouping,
  CostQuery,
} from './ops/costs.js';
export type { CreateRunInput } from './ops/create-run.js';
export type { DeliveryTarget, DeliveryUpdate } from './ops/deliveries.js';
export type { EventQuery, NewEvent } from './ops/events.js';
export type { ItemFilter, RunItemHash } from './ops/get-items.js';
export type { InfluencerLookup, InfluencerUpdate } from './ops/influencers.js';
export type { HeldStrings, ItemHistoryRow } from './ops/item-history.js';
export type { DownloadedOutput, OutputFile } from './ops/outputs.js';
export type { RecentCreate } from './ops/recent-creates.js';
export type { AttemptIntentInput, AttemptIntentResult } from './ops/record-attempt-intent.js';
export type { AttemptOutcomeInput } from './ops/record-attempt-outcome.js';
export type {
  AttemptSubmittedInput,
  CreatedRemoteIds,
} from './ops/record-attempt-submitted.js';
export type { ReserveResult, RunSpendCap } from './ops/reserve-credits.js';
export { type NewReview, ReviewIndex } from './ops/reviews.js';
export type { Spend, StepProgress, StepSpend } from './ops/summaries.js';
export type { ItemStateChange } from './ops/update-item.js';
export { isJournalUrl, journalDisplayName } from './postgres/url.js';
export * from './records.js';
