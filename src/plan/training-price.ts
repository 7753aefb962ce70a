/**
 * The price of one training, the one rule for `plan`, `status` and a run's
 * reservation. The service has no preview for trainings and its reference
 * names no training price, so until this account's first training charge is
 * in the journal the price is an estimate: the job's `trainingEstimate:`,
 * else `$IBATCH_TRAINING_ESTIMATE`, else `ASSUMED_TRAINING_PRICE`. Once a
 * charge is known (the 202's `creditsCost`), the last one is the price.
 */

/**
 * An assumption, not a published or measured figure: what ibatch reserves
 * for a training when nothing better is known. It equals what the bundled
 * emulator charges, so runs against the emulator reserve what they pay.
 * Set `trainingEstimate:` (or `$IBATCH_TRAINING_ESTIMATE`) when the price
 * the service charges your account is known.
 */
export const ASSUMED_TRAINING_PRICE = 300;

/** Where a training price came from. */
export type TrainingPriceSource = 'last-charge' | 'job' | 'environment' | 'assumption';

export interface TrainingPrice {
  /** Credits of one training. */
  readonly credits: number;
  /** True until a training charge on this account is in the journal. */
  readonly estimated: boolean;
  readonly source: TrainingPriceSource;
}

/** The user's estimates of a training's price, while no charge is known. */
export interface TrainingEstimates {
  /** The job file's `trainingEstimate:`. */
  readonly job?: number | undefined;
  /** `$IBATCH_TRAINING_ESTIMATE`. */
  readonly environment?: number | undefined;
}

/** The price of one training: the account's last charge, else the first estimate given. */
export function trainingPrice(
  lastCharged: number | undefined,
  estimates: TrainingEstimates = {},
): TrainingPrice {
  if (lastCharged !== undefined)
    return { credits: lastCharged, estimated: false, source: 'last-charge' };
  if (estimates.job !== undefined)
    return { credits: estimates.job, estimated: true, source: 'job' };
  if (estimates.environment !== undefined)
    return { credits: estimates.environment, estimated: true, source: 'environment' };
  return { credits: ASSUMED_TRAINING_PRICE, estimated: true, source: 'assumption' };
}

/** The environment variable that sets the estimate for every job without `trainingEstimate:`. */
export const TRAINING_ESTIMATE_ENV = 'IBATCH_TRAINING_ESTIMATE';

/** How people read a price: `300 estimated (assumed: no price is published)`, `280 (the last training charge on this account)`. */
export function trainingPriceText(price: TrainingPrice): string {
  const from: Record<TrainingPriceSource, string> = {
    'last-charge': 'the last training charge on this account',
    job: "from the job's trainingEstimate",
    environment: `from $${TRAINING_ESTIMATE_ENV}`,
    assumption: 'assumed: no price is published',
  };
  return `${price.credits}${price.estimated ? ' estimated' : ''} (${from[price.source]})`;
}
