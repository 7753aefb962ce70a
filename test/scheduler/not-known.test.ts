/**
 * A generation or training the journal knows that the service answers 404 for
 * ends its wait after a bounded number of reads, whatever the deadline.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/index.js';
import type { GenerationStatus, TrainingJob } from '../../src/contract/index.js';
import {
  CompletionWatcher,
  type GenerationReader,
} from '../../src/scheduler/completion-watcher.js';
import { NOT_FOUND_READS, NotKnownToServiceError } from '../../src/scheduler/not-known.js';
import { StopController } from '../../src/scheduler/stop-control.js';
import { pollTraining, TrainingDeadlineError } from '../../src/scheduler/training-poll.js';

const notFound = (endpoint: 'getImage' | 'getTraining') =>
  new ApiError({ status: 404, code: 'not_found', message: 'not found', endpoint });

describe('a known id the service answers 404 for', () => {
  it('rejects the watch after NOT_FOUND_READS reads by id, long before its deadline', async () => {
    let reads = 0;
    const reader: GenerationReader = {
      listGenerations: async (kind) => ({ kind, generations: [] }),
      getGeneration: async () => {
        reads += 1;
        throw notFound('getImage');
      },
    };
    const watcher = new CompletionWatcher(reader, { minGapMs: 5, maxGapMs: 10 });
    const watch = watcher.watch('image', 'gen-1', {
      expectedAt: Date.now(),
      deadlineAt: Date.now() + 3_600_000,
    });
    const error = await watch.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotKnownToServiceError);
    expect((error as Error).message).toMatch(
      /generation gen-1, created earlier by this job, is not known to this service or account .*was the service \(base URL\) or the API key changed\?/,
    );
    expect((error as NotKnownToServiceError).exitCode).toBe(5);
    expect(reads).toBe(NOT_FOUND_READS);
    expect(watcher.size).toBe(0);
    watcher.stop();
  });

  it('counts only 404s in a row: an answer in between starts the count again', async () => {
    let reads = 0;
    const pending = { id: 'gen-2', status: 'processing', ready: false, terminal: false };
    const reader: GenerationReader = {
      listGenerations: async (kind) => ({ kind, generations: [] }),
      getGeneration: async () => {
        reads += 1;
        if (reads === 3) return pending as unknown as GenerationStatus;
        if (reads === 5) return { ...pending, terminal: true, ready: true, url: 'u' } as never;
        throw notFound('getImage');
      },
    };
    const watcher = new CompletionWatcher(reader, { minGapMs: 5, maxGapMs: 10 });
    const status = await watcher.watch('image', 'gen-2', { expectedAt: Date.now() });
    expect(status.terminal).toBe(true);
    watcher.stop();
  });

  it('ends a training poll after NOT_FOUND_READS 404s', async () => {
    let reads = 0;
    const client = {
      getTraining: async () => {
        reads += 1;
        throw notFound('getTraining');
      },
    };
    const ctx = { client: client as never, stop: new StopController(), speed: 1000 };
    const error = await pollTraining(ctx, 'tr-1', Date.now()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(NotKnownToServiceError);
    expect((error as Error).message).toMatch(/^training tr-1, created earlier by this job/);
    expect(reads).toBe(NOT_FOUND_READS);
  });

  it('gives up on a training still running at its deadline (the run stops, resumable)', async () => {
    const running = { trainingId: 'tr-2', status: 'lora', terminal: false } as TrainingJob;
    const client = { getTraining: async () => running };
    // Speed 10^6: the deadline is a few ms after the start.
    const ctx = { client: client as never, stop: new StopController(), speed: 1e6 };
    const error = await pollTraining(ctx, 'tr-2', Date.now()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(TrainingDeadlineError);
    expect((error as TrainingDeadlineError).exitCode).toBe(4);
    expect((error as Error).message).toMatch(/the next run polls it again/);
  });
});
