/**
 * All or nothing in the library: `connect().run(job, { allOrNothing: true })`
 * (or the job's `allOrNothing: true`) throws PlanDoesNotFitError carrying
 * the plan before a run is recorded or anything is sent that spends;
 * `allOrNothing: false` overrides the job's `true` (the run starts and stops
 * at the budget, the default).
 */
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { PlanDoesNotFitError } from '../../src/plan/index.js';
import { charges, connectedEmulator, imageJob, workspace } from './helpers.js';

const SCALE = 30;

describe('runJob({ allOrNothing })', () => {
  it('refuses a run over the budget with the plan, nothing recorded or charged; false overrides the job', async () => {
    const { em, connection } = await connectedEmulator(SCALE);
    // Three 2-credit images against a budget of 5.
    const ws = workspace(imageJob({ name: 'aon-lib', n: 3, budget: 5 }));

    const refused = await connection.run(ws.jobPath, { allOrNothing: true }).catch((e) => e);
    expect(refused).toBeInstanceOf(PlanDoesNotFitError);
    expect(refused).toMatchObject({ code: 'plan_does_not_fit', exitCode: 3 });
    expect((refused as PlanDoesNotFitError).plan).toMatchObject({
      total: 6,
      remaining: 5,
      verdict: 'over-budget',
    });
    expect(await charges(em)).toHaveLength(0);
    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      expect(journal.listRuns('aon-lib')).toHaveLength(0);
    } finally {
      journal.close();
    }

    // The job asks for it; the caller's false wins: the default run, stopped at the budget.
    ws.write(
      imageJob({ name: 'aon-lib', n: 3, budget: 5 }).replace(
        'budget: 5',
        'budget: 5\nallOrNothing: true',
      ),
    );
    await expect(connection.run(ws.jobPath)).rejects.toBeInstanceOf(PlanDoesNotFitError);
    const { result } = await connection.run(ws.jobPath, { allOrNothing: false });
    expect(result.exitCode).toBe(3);
    expect((await charges(em)).length).toBe(2);
  }, 60_000);
});
