/**
 * All or nothing: before a run is recorded or anything is spent, the next
 * run's total is computed by `plan`'s own code (planNextRun: the same
 * decision, the same quotes, the same training price) and weighed against the
 * budget left, `--max-spend` and the balance. A total that does not fit stops
 * the invocation with `PlanDoesNotFitError` (exit 3).
 */
import { PlanDoesNotFitError } from '../plan/index.js';
import type { LeanJob } from './check-job.js';
import { planNextRun } from './plan-next-run.js';
import type { RunJobOptions } from './types.js';

export async function assertNextRunFits(
  options: RunJobOptions,
  validated: Pick<LeanJob, 'job' | 'catalog' | 'items' | 'preflight'>,
): Promise<void> {
  const { job, catalog, items, preflight } = validated;
  const plan = await planNextRun(
    {
      job,
      catalog,
      items,
      preflight,
      client: options.client,
      accountFingerprint: options.accountFingerprint,
      ...(options.journalPath !== undefined ? { journalPath: options.journalPath } : {}),
      ...(options.fresh !== undefined ? { fresh: options.fresh } : {}),
      ...(options.runId !== undefined ? { runId: options.runId } : {}),
      ...(options.maxSpend !== undefined ? { maxSpend: options.maxSpend } : {}),
      ...(options.serviceMoved ? { serviceMoved: true } : {}),
    },
    {
      requests: options.limits.requests,
      ...(options.signal ? { signal: options.signal } : {}),
      ...(options.trainingEstimate !== undefined
        ? { trainingEstimate: options.trainingEstimate }
        : {}),
    },
  );
  if (plan.verdict !== 'ok') throw new PlanDoesNotFitError(plan, job.name);
}
