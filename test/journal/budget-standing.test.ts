/**
 * `budgetStanding`: where a job stands against its budget, the one place
 * "budget left" is computed. It sums every run of the job on one service
 * (reserved, charged, refunded; trainings are items too), and nothing of
 * another service or another job.
 */
import { describe, expect, it } from 'vitest';
import type { Journal } from '../../src/journal/index.js';
import { item, onEachStore, refundAttempt, submitAttempt, tempJournal } from './helpers.js';

const A = 'https://a.example/api/v1';
const B = 'https://b.example/api/v1';

function run(journal: Journal, runId: string, jobName: string, service: string): string {
  journal.createRun({
    runId,
    jobName,
    jobPath: `/jobs/${jobName}.yaml`,
    jobHash: 'h',
    budget: null, // the caps are not under test: every reservation is taken
    options: { service },
  });
  return runId;
}

/** One item of `runId` charged `cost` (its attempt submitted). */
function charged(journal: Journal, runId: string, key: string, cost: number, stepId = 'shots') {
  journal.addItems(runId, [item(key, stepId, cost)]);
  journal.recordAttemptIntent({
    runId,
    itemKey: key,
    attemptNo: 1,
    idempotencyKey: `${runId}-${key}`,
    request: {},
    requestHash: 'h',
    quotedCost: cost,
  });
  submitAttempt(journal, runId, key, 1, [`g-${runId}-${key}`], cost);
}

onEachStore(() => {
  describe('budgetStanding', () => {
    it('sums every run of the job on the service, trainings, refunds and reservations included', async () => {
      const journal = await tempJournal();
      const first = run(journal, 'r1', 'spring', A);
      charged(journal, first, 'train-mia', 300, 'influencers');
      charged(journal, first, 'a', 10);
      charged(journal, first, 'b', 10);
      refundAttempt(journal, first, 'b');
      const second = run(journal, 'r2', 'spring', A);
      charged(journal, second, 'c', 4);
      // A reservation held for a create not answered yet.
      journal.addItems(second, [item('d', 'shots', 6)]);
      journal.recordAttemptIntent({
        runId: second,
        itemKey: 'd',
        attemptNo: 1,
        idempotencyKey: 'r2-d',
        request: {},
        requestHash: 'h',
        quotedCost: 6,
      });
      // Not counted: the job on another service, another job on this one.
      charged(journal, run(journal, 'r3', 'spring', B), 'e', 50);
      charged(journal, run(journal, 'r4', 'autumn', A), 'f', 70);

      expect(journal.budgetStanding({ name: 'spring', budget: 400 }, A)).toEqual({
        budget: 400,
        charged: 324,
        refunded: 10,
        net: 314,
        reserved: 6,
        committed: 320,
        remaining: 80,
      });
      expect(journal.budgetStanding({ name: 'spring', budget: null }, A).remaining).toBeNull();
      expect(journal.budgetStanding({ name: 'spring', budget: 40 }, B)).toMatchObject({
        committed: 50,
        remaining: -10,
      });
      expect(journal.budgetStanding({ name: 'winter', budget: 5 }, A)).toMatchObject({
        committed: 0,
        remaining: 5,
      });
    });
  });
});
