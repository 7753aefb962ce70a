/**
 * @module scheduler
 * The run engine: executes a job's items in dependency order inside the
 * account's rate limits and the budget, journaling every step before it acts.
 */

export {
  type CheckJobOptions,
  checkJobBeforeSpending,
  type JobCheckedBeforeSpending,
  type PreflightClient,
  validateBeforeSpending,
} from './check-job.js';
export {
  CompletionWatcher,
  GenerationDeadlineError,
  type GenerationReader,
} from './completion-watcher.js';
export { prepareJobFiles } from './decide/input-files.js';
export { filelessIdentity, identityOf } from './decide/item-identity.js';
export { type NextRun, nextRun } from './decide/next-run.js';
export { PlanItems, recordedItems } from './decide/plan-items.js';
export { jobFileDrift, scopeOf } from './decide/run-history.js';
export { ServiceChangedError } from './decide/service-move.js';
export { fetchOutputsHere, OutputFetchError } from './fetch-here.js';
export { countItems, countsOf, runProgress } from './finish-run.js';
export { DependencyFailedError } from './item-graph.js';
export {
  inputFingerprint,
  type KnownJobFile,
  knownJobFile,
  perStep,
  type StepItems,
} from './job-facts.js';
export { parseInferenceTime } from './latency.js';
export { OutputFolderLockedError, OutputFolderOwnedError } from './output-folder-lock.js';
export { type PlanNextRunInput, planNextRun } from './plan-next-run.js';
export { checkBeforeSpending, Preflight } from './preflight.js';
export { assertRunId, MAX_RUN_ID_LENGTH, RUN_ID_RULE } from './run-id.js';
export { runJob } from './run-job.js';
export { writeRunOutputs } from './run-outputs.js';
export { RESUME_AFTER_INTERRUPT, runStatusOfError } from './stop-control.js';
export type {
  ItemOutcomeState,
  ProgressSnapshot,
  RunEvent,
  RunJobOptions,
  RunResult,
} from './types.js';
export { createConcurrencyForShare, RUN_DEFAULTS } from './types.js';
