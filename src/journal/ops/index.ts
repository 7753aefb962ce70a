/**
 * Every journal operation: a synchronous function of the database handle
 * (`JournalDb`) and its arguments, SQL inline. `Journal` (../journal.ts)
 * calls them as `ops.name(this.#j, ...)`; a new operation is a file here, a
 * line below and one method there.
 */
export { addItems } from './add-items.js';
export { addOutputs } from './add-outputs.js';
export { adoptRun } from './adopt-run.js';
export { assetUrlsOfService, findAsset, recordAsset } from './assets.js';
export { budgetStanding } from './budget-standing.js';
export { copyJournalRows, jobsInBoth } from './copy-journal.js';
export { costBreakdown } from './costs.js';
export { createRun } from './create-run.js';
export { getDelivery, recordDelivery } from './deliveries.js';
export { appendEvent, listEvents } from './events.js';
export {
  getAttempt,
  getOpenAttempt,
  listAttempts,
  listOpenAttempts,
} from './get-attempts.js';
export {
  eachRunItemHash,
  firstUnendedItemKeys,
  getItem,
  getItemsOfKeys,
  itemKeysInState,
  listItems,
} from './get-items.js';
export { findUnfinishedRun, getRun, listRuns } from './get-run.js';
export {
  findInfluencer,
  lastTrainingCharge,
  listJobInfluencers,
  saveInfluencer,
} from './influencers.js';
export {
  eachItemRequestHash,
  latestItems,
  recordedItemState,
  removeUnattemptedItem,
  replaceItemRequest,
  succeededItemKeys,
} from './item-history.js';
export { type ItemPageWithRows, itemPagesWithRows } from './item-pages.js';
export {
  countOutputFiles,
  eachDownloadedFile,
  findDownloadedOutput,
  getOutput,
  listOutputFiles,
  listOutputs,
  listOutputsOfItems,
  markOutputDownloaded,
  markOutputFailed,
  moveOutputFile,
} from './outputs.js';
export { recentCreates } from './recent-creates.js';
export { recordAttemptIntent } from './record-attempt-intent.js';
export { recordAttemptOutcome } from './record-attempt-outcome.js';
export { recordAttemptSubmitted } from './record-attempt-submitted.js';
export {
  committedCredits,
  releaseReservation,
  reserveCredits,
} from './reserve-credits.js';
export { latestReviews, ReviewIndex, recordReview } from './reviews.js';
export {
  countSucceededUnattempted,
  progressByStep,
  spendByStep,
  spendSummary,
} from './summaries.js';
export { setItemQuote, setItemState } from './update-item.js';
export {
  setRunBudget,
  setRunJobFacts,
  setRunNotBefore,
  setRunOutputDir,
  setRunService,
  setRunStatus,
  setRunTags,
} from './update-run.js';
