/**
 * Polls one training until it is terminal, within bounds: a deadline, and a
 * few 404s in a row (the service does not know the id: not-known.ts).
 */
import type { TrainingJob } from '../contract/index.js';
import { EXIT, IbatchError, sleep } from '../shared/index.js';
import type { RunContext } from './context.js';
import { isNotFound, NOT_FOUND_READS, NotKnownToServiceError } from './not-known.js';

/**
 * How long a training may take before the run stops waiting for it. An
 * assumption: the service reference gives no training duration (the
 * emulator's lasts 32 s); trainings are refunded when they fail, so a
 * training still running after this long is taken as stuck. Scaled by the
 * run's speed like every wait of the run.
 */
export const TRAINING_DEADLINE_MS = 2 * 60 * 60_000;

/**
 * A training still not terminal at its deadline. The run stops (exit 4,
 * resumable) rather than failing it: it was paid, it may still finish, and a
 * failed training would be paid again by the next run.
 */
export class TrainingDeadlineError extends IbatchError {
  constructor(trainingId: string, deadlineAt: number) {
    super(
      'training_deadline',
      `training ${trainingId} did not finish before its deadline (${new Date(deadlineAt).toISOString()}); it may still finish on the service, and the next run polls it again`,
      EXIT.unreachable,
    );
  }
}

export async function pollTraining(
  ctx: Pick<RunContext, 'client' | 'stop' | 'speed'>,
  trainingId: string,
  startedAt: number,
): Promise<TrainingJob> {
  const expectedMs = 30_000 / ctx.speed;
  const interval = Math.min(30_000, Math.max(250, expectedMs / 6));
  const deadlineAt = startedAt + TRAINING_DEADLINE_MS / ctx.speed;
  const signal = ctx.stop.hardStop.signal;
  let notFound = 0;
  for (;;) {
    try {
      const job = await ctx.client.getTraining(trainingId, { signal });
      notFound = 0;
      if (job.terminal) return job;
    } catch (error) {
      if (!isNotFound(error) || signal.aborted) throw error;
      notFound += 1;
      if (notFound >= NOT_FOUND_READS)
        throw new NotKnownToServiceError('training', trainingId, notFound);
    }
    if (Date.now() >= deadlineAt) throw new TrainingDeadlineError(trainingId, deadlineAt);
    await sleep(Math.min(interval, Math.max(0, deadlineAt - Date.now())), signal);
  }
}
