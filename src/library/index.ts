/**
 * @module library
 * The short way in (`connect`) and what a run invocation does besides the
 * run: deliver its outputs, announce its end. The CLI's commands use these
 * too, so CLI and library runs do the same.
 */
export {
  type Connection,
  type ConnectionPlanOptions,
  type ConnectionValidateOptions,
  type ConnectOptions,
  connect,
} from './connect.js';
export {
  type DeliverRequest,
  deliverJob,
  type FailedDelivery,
  type RunDelivery,
} from './deliver-job.js';
export {
  type DescribedKeys,
  describedItemsOfFile,
  describedKeysOf,
  knownFromJournal,
} from './described-items.js';
export { type ResumeFlags, resumeCommand, shellQuote } from './resume-command.js';
export type {
  ConnectionRunOptions,
  HandOffOptions,
  RunHandOff,
  RunOutcome,
} from './run-and-hand-off.js';
export type { RunNotification } from './run-notifier.js';
