/**
 * What a resume compares of its run with the job file (src/scheduler/decide/
 * resume-plan.ts): the run's items come from the job's latest records when
 * those hold every one of them, and are read from the journal otherwise;
 * the plan is the same either way. On a real SQLite journal.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { JobItem } from '../../../src/job/index.js';
import { type Journal, type NewItem, openJournal } from '../../../src/journal/index.js';
import type { DecideOptions, DecisionItem } from '../../../src/scheduler/decide/next-run.js';
import { resumePlan } from '../../../src/scheduler/decide/resume-plan.js';
import { scopedLatest } from '../../../src/scheduler/decide/run-history.js';
import { tempDir } from '../../helpers/index.js';

const SERVICE = 'http://127.0.0.1:8080/api/v1';
const HASH = 'h1';

const item = (itemKey: string, requestHash = HASH): NewItem => ({
  itemKey,
  stepId: 'shots',
  kind: 'image',
  request: { input: { prompt: itemKey } },
  requestHash,
});

/** The job file's items: every one with the identity `HASH`. */
const jobItems = (...keys: string[]): DecisionItem[] =>
  keys.map((key) => ({ key, stepId: 'shots' }));

/** The job file's whole item of `key`, as a changed item's new request needs it. */
const wholeJobItem = (key: string) =>
  ({
    key,
    stepId: 'shots',
    label: key,
    modelId: 'm',
    kind: 'image',
    request: { input: { prompt: `${key}, now` } },
    expectedOutputs: 1,
    vars: {},
  }) as unknown as JobItem;

const options: DecideOptions<DecisionItem> = {
  service: SERVICE,
  scope: `${SERVICE}#fp`,
  identity: () => HASH,
  trainings: () => [],
  jobItems: (keys) => new Map([...keys].map((key) => [key, wholeJobItem(key)])),
};

let journal: Journal | undefined;
afterEach(() => journal?.close());

async function journalWithRuns(...runs: readonly (readonly NewItem[])[]): Promise<Journal> {
  const opened = await openJournal(join(tempDir('resume-plan'), 'journal.db'));
  runs.forEach((items, i) => {
    opened.createRun({
      runId: `r${i + 1}`,
      jobName: 'job',
      jobPath: '/job.yaml',
      jobHash: 'x',
      budget: null,
      options: { service: SERVICE },
    });
    opened.addItems(`r${i + 1}`, items);
  });
  return opened;
}

/** The journal, counting its reads of a run's item hashes. */
function counted(opened: Journal): { reader: Journal; reads: () => number } {
  const read = vi.spyOn(opened, 'eachRunItemHash');
  return { reader: opened, reads: () => read.mock.calls.length };
}

const planOf = (plan: ReturnType<typeof resumePlan>) => ({
  drop: plan.drop.map((record) => record.itemKey),
  changes: plan.changes,
  replace: plan.replace.map((next) => next.itemKey),
  deferred: plan.deferred,
});

describe('resumePlan', () => {
  it('takes the run’s items from the latest records when they hold all of them', async () => {
    journal = await journalWithRuns([item('a'), item('b'), item('gone')]);
    const run = journal.getRun('r1');
    if (!run) throw new Error('no run');
    const { reader, reads } = counted(journal);
    const latest = scopedLatest(reader, 'job', options);
    const items = jobItems('a', 'b');
    const plan = resumePlan(reader, items, run, options, latest);
    expect(reads()).toBe(0);
    expect(planOf(plan).drop).toEqual(['gone']);
    // The same plan as from the run's own rows (no latest records to use).
    expect(planOf(plan)).toEqual(planOf(resumePlan(reader, items, run, options, new Map())));
    expect(reads()).toBe(1);
  });

  it('lists what changed in the job file’s order, then the removed items by key, either way', async () => {
    // Recorded in another order than the job file's, and all changed since.
    const recorded = ['c', 'zz-gone', 'a', 'b', 'aa-gone'].map((key) => item(key, 'old'));
    journal = await journalWithRuns(recorded);
    const run = journal.getRun('r1');
    if (!run) throw new Error('no run');
    const { reader, reads } = counted(journal);
    const items = jobItems('b', 'a', 'c');
    const fromLatest = planOf(
      resumePlan(reader, items, run, options, scopedLatest(reader, 'job', options)),
    );
    expect(reads()).toBe(0);
    expect(fromLatest.replace).toEqual(['b', 'a', 'c']);
    expect(fromLatest.drop).toEqual(['aa-gone', 'zz-gone']);
    expect(planOf(resumePlan(reader, items, run, options, new Map()))).toEqual(fromLatest);
    expect(reads()).toBe(1);
  });

  it('reads the run’s items when a later run holds the latest record of one of them', async () => {
    // r2 recorded `b` after r1 with another request: the latest record of `b`
    // is r2's, and the resume of r1 judges r1's own `b` (unchanged).
    journal = await journalWithRuns([item('a'), item('b'), item('gone')], [item('b', 'h2')]);
    const run = journal.getRun('r1');
    if (!run) throw new Error('no run');
    const { reader, reads } = counted(journal);
    const latest = scopedLatest(reader, 'job', options);
    expect(latest.get('b')?.runId).toBe('r2');
    const plan = resumePlan(reader, jobItems('a', 'b'), run, options, latest);
    expect(reads()).toBe(1);
    expect(planOf(plan)).toEqual({
      drop: ['gone'],
      changes: [expect.stringContaining('gone')],
      replace: [],
      deferred: 0,
    });
  });
});
