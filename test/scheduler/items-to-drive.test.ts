/**
 * What a run drives (src/scheduler/items-to-drive.ts) comes from the lean
 * records and the journal as the item window asks for it: the job is
 * expanded again a batch at a time, only for the run's items not ended, and
 * each item goes out with the request its journal record holds. Real job
 * file, rows file and journal.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { validateJob } from '../../src/job/index.js';
import { ITEM_STATE, openJournal } from '../../src/journal/index.js';
import { releaseLatest } from '../../src/plan/index.js';
import { prepareJobFiles } from '../../src/scheduler/decide/input-files.js';
import { PlanItems } from '../../src/scheduler/decide/plan-items.js';
import { selectRun } from '../../src/scheduler/decide/select-run.js';
import {
  drivenItems,
  driveSource,
  FIRST_BATCH,
  runItemCounts,
} from '../../src/scheduler/items-to-drive.js';
import { defer, tempDir } from '../helpers/index.js';
import { emulatorCatalog, ROWS_JOB } from '../job/helpers.js';

async function selectedRun(rows: number) {
  const dir = tempDir('items-to-drive');
  writeFileSync(join(dir, 'job.yaml'), ROWS_JOB);
  const products = Array.from({ length: rows }, (_, i) => `product ${i}`);
  writeFileSync(join(dir, 'rows.csv'), ['product', ...products, ''].join('\n'));
  const { job, catalog, items } = await validateJob(join(dir, 'job.yaml'), {
    models: emulatorCatalog(),
  });
  const lean = PlanItems.of(job, catalog, items);
  lean.identify(await prepareJobFiles(job, lean.mediaRefs));
  const journal = await openJournal(join(dir, 'journal.db'));
  defer(() => journal.close());
  const select = () => {
    const selected = selectRun(journal, job, lean, {
      settledRuns: new Set(),
      snapshot: { service: 'http://service.test/api/v1', scope: 'http://service.test/api/v1#a' },
      trainings: () => [],
    });
    if (selected.kind !== 'run') throw new Error('expected a run to drive');
    return selected;
  };
  const selection = select();
  const steps = new Map(job.steps.map((step) => [step.id, step]));
  return {
    journal,
    job,
    catalog,
    whole: items,
    items: lean,
    selection,
    select,
    steps,
    keys: items.map((i) => i.key),
  };
}

describe('items to drive', () => {
  it('expands whole items a batch at a time as they are reached, passing over ended ones', async () => {
    const { journal, items, selection, steps, keys } = await selectedRun(7);
    const runId = selection.run.runId;
    const [first, second] = keys;
    if (!first || !second) throw new Error('the job has no items');
    journal.setItemState(runId, second, { state: ITEM_STATE.succeeded });
    const asked: number[] = [];
    const expand = items.jobItems;
    items.jobItems = (wanted) => {
      asked.push(wanted.size);
      return expand(wanted);
    };
    // The records are read a batch at a time, not one item each (a round trip each on PostgreSQL).
    const reads: number[] = [];
    const readBatch = journal.getItemsOfKeys.bind(journal);
    journal.getItemsOfKeys = (run, wanted) => {
      reads.push(wanted.length);
      return readBatch(run, wanted);
    };
    journal.getItem = () => {
      throw new Error('an item read alone');
    };
    const driven = drivenItems(
      driveSource({ journal, runId, items, steps, batch: 2 }, selection.state),
    );
    const head = driven.next();
    // One batch of two whole items for the first item out, not the job's seven.
    expect(asked).toEqual([2]);
    expect(head.done).toBe(false);
    const rest = [...driven];
    const out = [head.value, ...rest].map((d) => d?.item.key);
    expect(out).toEqual(keys.filter((key) => key !== second));
    expect(asked).toEqual([2, 2, 2]);
    // Seven keys in batches of two: the second key ended, so one more read fills the first batch.
    expect(reads).toEqual([2, 1, 2, 2]);
    expect(runItemCounts({ journal, runId, steps })).toEqual({ total: 7, ended: 1 });
  });

  it('sends each item with the request its journal record holds (a remake keeps its identity)', async () => {
    const { journal, items, selection, steps, keys } = await selectedRun(3);
    const runId = selection.run.runId;
    const remade = keys[1] ?? '';
    const record = journal.getItem(runId, remade);
    if (!record) throw new Error('the run has no such item');
    const request = record.request as { input: Record<string, unknown> };
    const remadeRequest = { ...request, input: { ...request.input, seed: 4242 } };
    expect(
      journal.replaceItemRequest(runId, {
        itemKey: remade,
        stepId: record.stepId,
        kind: record.kind,
        request: remadeRequest,
        requestHash: record.requestHash,
      }),
    ).toBe(true);
    const driven = [...drivenItems(driveSource({ journal, runId, items, steps }, selection.state))];
    expect(driven.map((d) => d.item.key)).toEqual(keys);
    expect(driven[1]?.item.request).toEqual(remadeRequest);
    expect(driven[0]?.item.request).toEqual(journal.getItem(runId, keys[0] ?? '')?.request);
  });

  it('a resume drives first the items its check kept whole: no scan of the job up to them', async () => {
    const { journal, job, catalog, whole, selection, steps, keys } = await selectedRun(9);
    const runId = selection.run.runId;
    for (const key of keys.slice(0, 6))
      journal.setItemState(runId, key, { state: ITEM_STATE.succeeded });
    const first = new Set(journal.firstUnendedItemKeys(runId, FIRST_BATCH));
    expect([...first]).toEqual(keys.slice(6));
    // What the check scan does (check-job.ts): every item goes by, the first ones to drive are kept.
    const items = new PlanItems(job, catalog, undefined, first);
    for (const item of whole) items.add(item);
    items.identify(await prepareJobFiles(job, items.mediaRefs));
    let scans = 0;
    const scan = items.eachOf.bind(items);
    items.eachOf = (wanted, visit) => {
      scans += 1;
      scan(wanted, visit);
    };
    const driven = [...drivenItems(driveSource({ journal, runId, items, steps }, selection.state))];
    expect(driven.map((d) => d.item.key)).toEqual(keys.slice(6));
    expect(driven.map((d) => d.item)).toEqual(
      whole
        .slice(6)
        .map((item) => ({ ...item, request: journal.getItem(runId, item.key)?.request })),
    );
    expect(scans).toBe(0);
  });

  it("a resume passes over what ended before it without the decision's latest records", async () => {
    const { journal, items, select, selection, steps, keys } = await selectedRun(5);
    const runId = selection.run.runId;
    for (const key of keys.slice(0, 3))
      journal.setItemState(runId, key, { state: ITEM_STATE.succeeded });
    const resumed = select();
    expect(resumed.run.runId).toBe(runId);
    const source = driveSource({ journal, runId, items, steps }, resumed.state);
    // What a run does before its first item is driven (drive-run.ts).
    releaseLatest(resumed.state);
    expect(() => resumed.state.latest).toThrow(/released/);
    expect(resumed.state.verdicts.size).toBe(keys.length);
    const read: string[] = [];
    const readBatch = journal.getItemsOfKeys.bind(journal);
    journal.getItemsOfKeys = (run, wanted) => {
      read.push(...wanted);
      return readBatch(run, wanted);
    };
    const driven = [...drivenItems(source)];
    expect(driven.map((d) => d.item.key)).toEqual(keys.slice(3));
    // The items that had ended are passed over without a read of their records.
    expect(read).toEqual(keys.slice(3));
  });
});
