/**
 * @module plan
 * Quoting a job before running it: cost per step, total against the budget
 * and the live balance, without spending a credit.
 */

export {
  type DesiredState,
  desiredState,
  type ItemVerdict,
  releaseLatest,
  removedRows,
  VERDICTS_TO_MAKE,
  type VerdictCounts,
  verdictCounts,
  type WantedItem,
} from './desired-state.js';
export { PlanDoesNotFitError } from './does-not-fit.js';
export { formatPlan, planJson } from './format.js';
export {
  type NextRunFacts,
  type Plan,
  type PlannedJob,
  type PlanOptions,
  type PlanStep,
  planJob,
  type QuoteClient,
  quotePriceClasses,
  type Verdict,
} from './plan.js';
export { PriceClasses, priceClassOfItem } from './price-classes.js';
export {
  MEDIA_PLACEHOLDER_ORIGIN,
  type QuoteRequest,
  quoteRequestOf,
  SOURCE_GENERATION_STAND_IN,
} from './quote-request.js';
export { type PreviewClient, priceClassOf, QuoteCache } from './quotes.js';
export { RecordedItems } from './recorded-items.js';
export {
  ASSUMED_TRAINING_PRICE,
  TRAINING_ESTIMATE_ENV,
  type TrainingEstimates,
  type TrainingPrice,
  trainingPrice,
  trainingPriceText,
} from './training-price.js';
