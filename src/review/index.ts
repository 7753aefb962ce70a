/**
 * @module review
 * Review decisions (docs/review.md): which outputs a person or a
 * script names, recording approve / reject in the journal's review log, the
 * counts `status` shows, and `export` (and delivery) of the current or
 * approved outputs.
 * What a rejection makes the next run do lives with the run's decision
 * (src/scheduler/decide/remake.ts, src/plan/desired-state.ts).
 */
export { chosenRows } from './chosen.js';
export {
  type DecisionOptions,
  defaultReviewer,
  type ReviewCounts,
  recordDecisions,
  reviewCounts,
} from './decisions.js';
export { exportOutputs } from './export.js';
export { newestRunOf, outputRows, type ReviewedOutput, resolveOutputs } from './outputs.js';
