/**
 * `planJob`: what a run would charge, from preview-credits quotes (which
 * never charge). Items are grouped by price class first (`quotes.ts`, the
 * rule a run's reservations use too) and each class is quoted once with its
 * first item's request; quotes run in parallel within the account's request
 * rate; the live balance is read alongside. Nothing is kept per item, so a
 * 100,000-row job costs a handful of previews and little memory.
 */
import PQueue from 'p-queue';
import type { RateWindow } from '../contract/index.js';
import { SERVICE_RATE_LIMITS } from '../contract/index.js';
import {
  JobFileError,
  type JobIssue,
  type JobItem,
  jobIssueAt,
  type LoadedJob,
  type ModelCatalog,
} from '../job/index.js';
import type { BudgetStanding } from '../journal/index.js';
import { isIbatchError } from '../shared/index.js';
import { NO_VERDICTS, type VerdictCounts } from './desired-state.js';
import { type PriceClass, PriceClasses } from './price-classes.js';
import type { QuoteRequest } from './quote-request.js';
import { type PreviewClient, QuoteCache } from './quotes.js';
import { type TrainingPriceSource, trainingPrice } from './training-price.js';

/** The client calls a plan needs (read-only). */
export interface QuoteClient extends PreviewClient {
  getAccount(options?: { signal?: AbortSignal }): Promise<{ credits: number }>;
}

/** The defaults of {@link PlanOptions} that are values, written once (read by `planJob` and by the `@default` tags). */
export const PLAN_DEFAULTS = {
  concurrency: 4,
} as const;

export interface PlanOptions {
  /** Quotes in flight at once. @default 4 */
  readonly concurrency?: number;
  /** Request budget for quotes. @default SERVICE_RATE_LIMITS.requests */
  readonly requests?: RateWindow;
  /** Stops quoting. @default none */
  readonly signal?: AbortSignal;
  /**
   * The estimate of a training's price from the environment
   * (`$IBATCH_TRAINING_ESTIMATE`), used while no training charge on the
   * account is known and the job sets no `trainingEstimate:`.
   * @default the job's `trainingEstimate:`, else ASSUMED_TRAINING_PRICE
   */
  readonly trainingEstimate?: number;
}

/**
 * What the quote takes of the next run (`NextRun`, src/scheduler/decide/next-run.ts). The
 * price classes then hold only the items that run pays for. Without it the
 * job is quoted as if no run of it had happened.
 */
export interface NextRunFacts {
  /** What the next run does. */
  readonly kind: 'new' | 'resume' | 'nothing';
  /** The unfinished run it resumes. */
  readonly resumes?: string;
  /** Per step: items per verdict and items no longer in the job file. */
  readonly counts: ReadonlyMap<string, VerdictCounts>;
  /** Trainings it starts; trainings it seeds that were paid before (cost 0). */
  readonly trainings: { readonly count: number; readonly reused: number };
  /** The account's last training charge (the price of one training), if the journal knows it. */
  readonly lastTrainingCharge?: number;
  /**
   * Where the job stands against its budget after its earlier runs on this
   * service (the journal's `budgetStanding`); absent: no journal yet.
   */
  readonly standing?: BudgetStanding;
  /** `--max-spend`: the most this invocation may commit. */
  readonly maxSpend?: number;
}

export interface PlanTrainings {
  /** Trainings the next run starts. */
  readonly count: number;
  /** Credits of one (training-price.ts): the account's last training charge, else an estimate. */
  readonly price: number;
  /** True while no training charge on this account is in the journal. */
  readonly estimated: boolean;
  readonly priceFrom: TrainingPriceSource;
  readonly cost: number;
  /** Job-local influencers trained before on this account with this configuration (cost 0). */
  readonly reused: number;
}

export interface PlanStep {
  readonly id: string;
  readonly modelId: string;
  readonly items: number;
  readonly outputs: number;
  /** Distinct per-item costs (one entry when every item costs the same). */
  readonly unitCosts: readonly number[];
  /** Sum of the quoted items' costs. */
  readonly cost: number;
  /** Items that can only be priced at run time, and why. */
  readonly unquoted: number;
  readonly unquotedReason?: string;
  /** The step's items by what the next run does with them (`items` are those it makes). */
  readonly counts: VerdictCounts;
}

export type Verdict = 'ok' | 'over-budget' | 'over-balance' | 'over-budget-and-balance';

export interface Plan {
  /** What the next run charges: its items and its trainings. */
  readonly total: number;
  readonly budget: number | null;
  /** The budget less what the job's earlier runs committed; null without a budget. */
  readonly remaining: number | null;
  /** Net credits of the job's earlier runs on this account. */
  readonly spent: number;
  readonly maxSpend: number | null;
  readonly balance: number;
  /** Preview calls made (one per price class). */
  readonly quotes: number;
  readonly steps: readonly PlanStep[];
  /** Items of steps no longer in the job file (left as they are). */
  readonly removedSteps: readonly { readonly id: string; readonly removed: number }[];
  /** Influencer trainings the run will start (charged by the service; no preview exists). */
  readonly trainings: PlanTrainings;
  readonly next: { readonly kind: NextRunFacts['kind']; readonly resumes: string | null };
  readonly verdict: Verdict;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

/** What a plan needs of a validated job. */
export interface PlannedJob {
  readonly job: LoadedJob;
  readonly items: Iterable<JobItem>;
  /** The model contracts: which fields are price-neutral. */
  readonly catalog: ModelCatalog;
}

/**
 * Plans a validated job (`validateJob`'s result fits) as if no run of it had
 * happened: every item and every training. `ibatch plan` reads the journal
 * (src/scheduler/plan-next-run.ts).
 */
export async function planJob(
  planned: PlannedJob,
  client: QuoteClient,
  options: PlanOptions = {},
): Promise<Plan> {
  const classes = new PriceClasses(planned.catalog);
  // A training is made only for a job-local influencer an item uses.
  const trained = new Set<string>();
  for (const item of planned.items) {
    classes.add(item);
    if (item.influencer && 'jobLocal' in item.influencer) trained.add(item.influencer.jobLocal);
  }
  return quotePriceClasses(planned.job, classes, client, {
    ...options,
    next: firstRun(classes, trained.size),
  });
}

/**
 * Quotes each price class once and totals the next run (the items it pays
 * for are already grouped): items plus trainings, against the budget left,
 * `--max-spend` and the balance.
 */
export async function quotePriceClasses(
  job: LoadedJob,
  classes: PriceClasses,
  client: QuoteClient,
  options: PlanOptions & { readonly next: NextRunFacts },
): Promise<Plan> {
  const { next } = options;
  const window = options.requests ?? SERVICE_RATE_LIMITS.requests;
  const queue = new PQueue({
    concurrency: options.concurrency ?? PLAN_DEFAULTS.concurrency,
    intervalCap: Math.max(1, window.count - 1), // one request left for the balance read
    interval: window.windowMs,
  });
  const signalOpt = options.signal ? { signal: options.signal } : {};
  const balance = client.getAccount(signalOpt).then((a) => a.credits);
  balance.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile
  const quotes = new QuoteCache(client, classes.catalog);
  await Promise.all(
    [...classes.values()].map((priceClass) =>
      queue.add(async () => {
        const { request } = priceClass;
        try {
          const cost = await quotes.quoteClass(
            priceClass.id,
            request.modelId,
            request.body,
            options.signal,
          );
          priceClass.result = { cost };
        } catch (error) {
          if (!isRefusal(error, request)) throw error;
          priceClass.result = {
            refused: (error as { serviceMessage?: string }).serviceMessage ?? String(error),
          };
        }
      }, signalOpt),
    ),
  );
  const refusals = refusalIssues(job, classes.values());
  if (refusals.length > 0) throw new JobFileError(refusals, job.source.text);
  const steps = job.steps.map((step) =>
    stepPlan(step, classes, next.counts.get(step.id) ?? NO_VERDICTS),
  );
  const price = trainingPrice(next.lastTrainingCharge, {
    job: job.trainingEstimate,
    environment: options.trainingEstimate,
  });
  const trainings: PlanTrainings = {
    count: next.trainings.count,
    price: price.credits,
    estimated: price.estimated,
    priceFrom: price.source,
    cost: round2(next.trainings.count * price.credits),
    reused: next.trainings.reused,
  };
  const total = round2(steps.reduce((sum, s) => sum + s.cost, 0) + trainings.cost);
  const credits = await balance;
  const standing = next.standing ?? nothingSpentYet(job.budget ?? null);
  const { remaining } = standing;
  const overBudget =
    (remaining !== null && total > remaining) ||
    (next.maxSpend !== undefined && total > next.maxSpend);
  const overBalance = total > credits;
  const verdict: Verdict =
    overBudget && overBalance
      ? 'over-budget-and-balance'
      : overBudget
        ? 'over-budget'
        : overBalance
          ? 'over-balance'
          : 'ok';
  const known = new Set(job.steps.map((s) => s.id));
  return {
    total,
    budget: standing.budget,
    remaining,
    spent: round2(standing.net),
    maxSpend: next.maxSpend ?? null,
    balance: credits,
    quotes: quotes.calls,
    steps,
    removedSteps: [...next.counts]
      .filter(([id, counts]) => !known.has(id) && counts.removed > 0)
      .map(([id, counts]) => ({ id, removed: counts.removed })),
    trainings,
    next: { kind: next.kind, resumes: next.resumes ?? null },
    verdict,
  };
}

/** The next run of a job no run has touched: every item is new, `trainings` start. */
function firstRun(classes: PriceClasses, trainings: number): NextRunFacts {
  const counts = new Map<string, VerdictCounts>();
  for (const priceClass of classes.values()) {
    for (const [stepId, n] of priceClass.itemsByStep) {
      const entry = counts.get(stepId) ?? { ...NO_VERDICTS };
      entry.new += n;
      counts.set(stepId, entry);
    }
  }
  return {
    kind: 'new',
    counts,
    trainings: { count: trainings, reused: 0 },
  };
}

/** The standing of a job no run has touched: nothing committed, the whole budget left. */
function nothingSpentYet(budget: number | null): BudgetStanding {
  return { budget, committed: 0, charged: 0, refunded: 0, reserved: 0, net: 0, remaining: budget };
}

function stepPlan(
  step: LoadedJob['steps'][number],
  classes: PriceClasses,
  counts: VerdictCounts,
): PlanStep {
  let cost = 0;
  let count = 0;
  let unquoted = 0;
  let reason: string | undefined;
  const unit = new Set<number>();
  for (const priceClass of classes.values()) {
    const n = priceClass.itemsByStep.get(step.id) ?? 0;
    if (n === 0) continue;
    count += n;
    const result = priceClass.result;
    if (result && 'cost' in result) {
      cost += result.cost * n;
      unit.add(result.cost);
    } else {
      unquoted += n;
      reason ??= result && 'refused' in result ? result.refused : 'not quoted';
    }
  }
  return {
    id: step.id,
    modelId: step.modelId,
    items: count,
    outputs: classes.outputs(step.id),
    unitCosts: [...unit].sort((a, b) => a - b),
    cost: round2(cost),
    unquoted,
    ...(reason !== undefined ? { unquotedReason: reason } : {}),
    counts,
  };
}

/**
 * A 400 from preview-credits (the service found the input invalid), or a 404
 * for a request with stand-ins (a service that resolves references while
 * quoting does not know the stand-in source generation).
 */
function isRefusal(error: unknown, request: QuoteRequest): boolean {
  if (!isIbatchError(error)) return false;
  const status = (error as { status?: number }).status;
  return status === 400 || (status === 404 && request.hasStandIns);
}

/**
 * A refused quote without stand-ins means the job's input is invalid in a way
 * the contract did not show (e.g. an integer-only number): report it like any
 * other job file problem, at the field the service named, for the item whose
 * request was sent (the others of its class were not sent).
 */
function refusalIssues(job: LoadedJob, classes: Iterable<PriceClass>): JobIssue[] {
  const issues: JobIssue[] = [];
  for (const { first, request, result } of classes) {
    if (!result || !('refused' in result) || request.hasStandIns) continue;
    const step = job.steps.find((s) => s.id === first.stepId);
    if (!step) continue;
    const field = /^input\.([\w-]+)/.exec(result.refused)?.[1];
    const path: (string | number)[] = [
      'generations',
      step.index,
      'input',
      ...(field ? [field] : []),
    ];
    issues.push(
      jobIssueAt(
        job,
        path,
        `item ${first.label}: the service refused the quote: ${result.refused}`,
      ),
    );
  }
  return issues;
}
