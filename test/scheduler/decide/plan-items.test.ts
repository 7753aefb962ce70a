/**
 * `plan`'s lean item records (src/scheduler/decide/plan-items.ts) stand in for the
 * job's whole items without changing a thing the decision or the quote sees:
 * the identity of every item is the one `run` computes (local files hashed
 * first), whole items come back from a re-scan of the job by key, and a price
 * class is quoted with its first charged item, whole, also when that item is
 * not the class's first in the job. Real job files, real files on disk.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { pngFor } from '../../../src/emulator/index.js';
import { type JobItem, validateJob } from '../../../src/job/index.js';
import { RecordedItems } from '../../../src/plan/index.js';
import { prepareJobFiles } from '../../../src/scheduler/decide/input-files.js';
import { itemIdentity } from '../../../src/scheduler/decide/item-identity.js';
import { PlanItems } from '../../../src/scheduler/decide/plan-items.js';
import { tempDir } from '../../helpers/index.js';
import { emulatorCatalog, ROWS_JOB } from '../../job/helpers.js';

async function jobOf(yaml: string, files: Record<string, string | Uint8Array> = {}) {
  const dir = tempDir('plan-items');
  for (const [name, content] of Object.entries(files)) writeFileSync(join(dir, name), content);
  writeFileSync(join(dir, 'job.yaml'), yaml);
  return validateJob(join(dir, 'job.yaml'), { models: emulatorCatalog() });
}

describe('plan items', () => {
  it('keep each item lean with the identity run computes, and give whole items back by key', async () => {
    const { job, catalog, items } = await jobOf(ROWS_JOB, {
      'rows.csv': 'product\n"a ""red"" scarf"\nb\nc\nd\n',
    });
    const planItems = PlanItems.of(job, catalog, items);
    const files = await prepareJobFiles(job, planItems.mediaRefs);
    planItems.identify(files);
    expect(planItems.items.map((i) => i.key)).toEqual(items.map((i) => i.key));
    expect(planItems.items.map(planItems.identity)).toEqual(
      items.map((i) => itemIdentity(job, files, i)),
    );
    // The CSV's doubled quote is one quote in the request, as before.
    expect(items[0]?.request.input.prompt).toBe('a "red" scarf');
    const wanted = new Set([items[1]?.key ?? '', items[3]?.key ?? '']);
    expect([...planItems.jobItems(wanted).values()]).toEqual([items[1], items[3]]);
  });

  it("quote a price class with its first charged item, re-scanned when it is not the class's first", async () => {
    const { job, catalog, items } = await jobOf(ROWS_JOB, { 'rows.csv': 'product\na\nb\nc\n' });
    const planItems = PlanItems.of(job, catalog, items);
    const firstOf = (charged: typeof planItems.items): JobItem | undefined =>
      [...planItems.priceClasses(charged).values()][0]?.first;
    expect(firstOf(planItems.items)).toBe(items[0]);
    // The first item done (the nightly case): the next one is quoted, whole.
    const rest = planItems.items.slice(1);
    expect(firstOf(rest)).toEqual(items[1]);
    const classes = planItems.priceClasses(rest);
    expect([...classes.values()].map((c) => Object.fromEntries(c.itemsByStep))).toEqual([
      { shots: 2 },
    ]);
    expect(classes.outputs('shots')).toBe(2);
  });

  it("keep a class's first item the journal surely does not hold, and quote it without a re-scan", async () => {
    const { job, catalog, items } = await jobOf(ROWS_JOB, { 'rows.csv': 'product\na\nb\nc\nd\n' });
    const identities = PlanItems.of(job, catalog, items).items.map((i) => i.identity ?? '');
    // The journal holds a and b as they are now, c with another request.
    const recorded = RecordedItems.of((onRecord) => {
      for (const at of [0, 1]) onRecord(items[at]?.key ?? '', identities[at] ?? '');
      onRecord(items[2]?.key ?? '', 'an older request');
    });
    expect(items.map((i, at) => recorded.has(i.key, identities[at] ?? ''))).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const planItems = PlanItems.of(job, catalog, items, recorded);
    const firstOf = (charged: typeof planItems.items): JobItem | undefined =>
      [...planItems.priceClasses(charged).values()][0]?.first;
    // c (changed) is the first item the next run surely makes: the scan's own object.
    expect(firstOf(planItems.items.slice(2))).toBe(items[2]);
    // b retried (a failed record with the same request) comes first: found again by a re-scan.
    const retried = firstOf(planItems.items.slice(1));
    expect(retried).toEqual(items[1]);
    expect(retried).not.toBe(items[1]);
  });

  it("give the journal's records the items' strings only where equal (a changed hash is the record's)", async () => {
    const { job, catalog, items } = await jobOf(ROWS_JOB, { 'rows.csv': 'product\na\nb\nc\n' });
    const planItems = PlanItems.of(job, catalog, items);
    const [a, b, c] = planItems.items.map((i) => ({ key: i.key, hash: i.identity ?? '' }));
    // (String identity is not observable: the bench measures the sharing; this, the values.)
    const held = planItems.held();
    expect(held(a?.key ?? '', a?.hash ?? '')).toEqual({ itemKey: a?.key, requestHash: a?.hash });
    expect(held(c?.key ?? '', 'c as it was')).toEqual({
      itemKey: c?.key,
      requestHash: 'c as it was',
    });
    expect(held(b?.key ?? '', 'b as it was')).toEqual({
      itemKey: b?.key,
      requestHash: 'b as it was',
    });
    expect(held(c?.key ?? '', c?.hash ?? '')).toEqual({ itemKey: c?.key, requestHash: c?.hash });
  });

  it('give an item naming a local file its identity once the file is hashed', async () => {
    const yaml = [
      'version: 1',
      'name: lean-media',
      'generations:',
      '  - id: edits',
      '    model: nano-edit',
      '    matrix: { look: [calm, bold] }',
      '    input: { prompt: "{{ look }}", image: ./ref.png }',
      '',
    ].join('\n');
    const { job, catalog, items } = await jobOf(yaml, { 'ref.png': pngFor('ref', 8) });
    const planItems = PlanItems.of(job, catalog, items);
    expect(planItems.items.map((i) => i.identity)).toEqual([undefined, undefined]);
    const files = await prepareJobFiles(job, planItems.mediaRefs);
    expect([...files.byPath.keys()]).toEqual([join(job.dir, 'ref.png')]);
    planItems.identify(files);
    expect(planItems.items.map(planItems.identity)).toEqual(
      items.map((i) => itemIdentity(job, files, i)),
    );
  });
});
