/**
 * `planJob`: what a run would charge, from preview-credits quotes (which
 * never charge). Identical requests are quoted once; quotes run in parallel
 * within the account's request rate; the live balance is read alongside.
 */
import PQueue from 'p-queue';
import type { CreditQuote, GenerationRequest, RateWindow } from '../contract/index.js';
import { SERVICE_RATE_LIMITS } from '../contract/index.js';
import {
  JobFileError,
  type JobIssue,
  type JobItem,
  jobIssueAt,
  type LoadedJob,
} from '../job/index.js';
import { isIbatchError } from '../shared/index.js';
import { type QuoteRequest, quoteRequestOf } from './quote-request.js';

/** The client calls a plan needs (read-only). */
export interface QuoteClient {
  previewCredits(
    modelId: string,
    body: GenerationRequest,
    options?: { signal?: AbortSignal },
  ): Promise<CreditQuote>;
  getAccount(options?: { signal?: AbortSignal }): Promise<{ credits: number }>;
}

export interface PlanOptions {
  /** Quotes in flight at once. @default 4 */
  readonly concurrency?: number;
  /** Request budget for quotes. @default the service's 120 per 60 s */
  readonly requests?: RateWindow;
  readonly signal?: AbortSignal;
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
}

export type Verdict = 'ok' | 'over-budget' | 'over-balance' | 'over-budget-and-balance';

export interface Plan {
  readonly total: number;
  readonly budget: number | null;
  readonly balance: number;
  /** Preview calls made (one per distinct request). */
  readonly quotes: number;
  readonly steps: readonly PlanStep[];
  /** Influencer trainings the run will start (charged by the service; no preview exists). */
  readonly trainings: number;
  readonly verdict: Verdict;
}

const round2 = (n: number) => Math.round(n * 100) / 100;

export async function planJob(
  job: LoadedJob,
  items: readonly JobItem[],
  client: QuoteClient,
  options: PlanOptions = {},
): Promise<Plan> {
  const window = options.requests ?? SERVICE_RATE_LIMITS.requests;
  const queue = new PQueue({
    concurrency: options.concurrency ?? 4,
    intervalCap: Math.max(1, window.count - 1), // one request left for the balance read
    interval: window.windowMs,
  });
  const requests = new Map<string, QuoteRequest>();
  const itemRequests = items.map((item) => {
    const request = quoteRequestOf(item);
    if (!requests.has(request.id)) requests.set(request.id, request);
    return request.id;
  });
  const results = new Map<string, { cost: number } | { refused: string }>();
  const signalOpt = options.signal ? { signal: options.signal } : {};
  const balance = client.getAccount(signalOpt).then((a) => a.credits);
  balance.catch(() => undefined); // awaited below; avoid an unhandled rejection meanwhile
  await Promise.all(
    [...requests.values()].map((request) =>
      queue.add(async () => {
        try {
          const quote = await client.previewCredits(request.modelId, request.body, signalOpt);
          results.set(request.id, { cost: quote.credits.cost });
        } catch (error) {
          if (!isRefusal(error, request)) throw error;
          results.set(request.id, {
            refused: (error as { serviceMessage?: string }).serviceMessage ?? String(error),
          });
        }
      }, signalOpt),
    ),
  );
  const refusals = refusalIssues(job, items, itemRequests, requests, results);
  if (refusals.length > 0) throw new JobFileError(refusals, job.source.text);
  const steps = job.steps.map((step): PlanStep => {
    let cost = 0;
    let outputs = 0;
    let count = 0;
    let unquoted = 0;
    let reason: string | undefined;
    const unit = new Set<number>();
    items.forEach((item, index) => {
      if (item.stepId !== step.id) return;
      count++;
      outputs += item.expectedOutputs;
      const result = results.get(itemRequests[index] ?? '');
      if (result && 'cost' in result) {
        cost += result.cost;
        unit.add(result.cost);
      } else {
        unquoted++;
        reason ??= result && 'refused' in result ? result.refused : 'not quoted';
      }
    });
    return {
      id: step.id,
      modelId: step.modelId,
      items: count,
      outputs,
      unitCosts: [...unit].sort((a, b) => a - b),
      cost: round2(cost),
      unquoted,
      ...(reason !== undefined ? { unquotedReason: reason } : {}),
    };
  });
  const total = round2(steps.reduce((sum, s) => sum + s.cost, 0));
  const credits = await balance;
  const overBudget = job.budget !== undefined && total > job.budget;
  const overBalance = total > credits;
  const verdict: Verdict =
    overBudget && overBalance
      ? 'over-budget-and-balance'
      : overBudget
        ? 'over-budget'
        : overBalance
          ? 'over-balance'
          : 'ok';
  return {
    total,
    budget: job.budget ?? null,
    balance: credits,
    quotes: requests.size,
    steps,
    trainings: job.influencers.size,
    verdict,
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
 * other job file problem, at the field the service named.
 */
function refusalIssues(
  job: LoadedJob,
  items: readonly JobItem[],
  itemRequests: readonly string[],
  requests: ReadonlyMap<string, QuoteRequest>,
  results: ReadonlyMap<string, { cost: number } | { refused: string }>,
): JobIssue[] {
  const issues: JobIssue[] = [];
  items.forEach((item, index) => {
    const id = itemRequests[index] ?? '';
    const result = results.get(id);
    if (!result || !('refused' in result) || requests.get(id)?.hasStandIns) return;
    const step = job.steps.find((s) => s.id === item.stepId);
    if (!step) return;
    const field = /^input\.([\w-]+)/.exec(result.refused)?.[1];
    const path: (string | number)[] = [
      'generations',
      step.index,
      'input',
      ...(field ? [field] : []),
    ];
    issues.push(
      jobIssueAt(job, path, `item ${item.label}: the service refused the quote: ${result.refused}`),
    );
  });
  return issues;
}
