/**
 * One quoting rule for `plan` and `run`: on a job whose rows differ in text
 * (and in one price-relevant setting), the plan's total equals what the run
 * reserves (its items' quoted costs) and what the service charges, and both
 * make one preview call per price class, counted by the emulator itself.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { formatCsv } from '../../src/job/index.js';
import { openJournal } from '../../src/journal/index.js';
import { runCliCaptured, testEmulator } from '../helpers/index.js';
import { envFor, ledgerNet, workspace } from '../scheduler/helpers.js';

const SCALE = 60;

async function previewCalls(emulator: RunningEmulator): Promise<number> {
  const stats = await emulator.admin.stats();
  return stats.accounts[0]?.counters.previews ?? -1;
}

/** `rows` rows, every prompt different; quality alternates standard / hd (two price classes). */
function textRowsJob(dir: string, rows: number, name: string): void {
  const table = [['product', 'quality']];
  for (let i = 0; i < rows; i++)
    table.push([`Product ${i}, "edition" ${i * 7}`, i % 3 === 0 ? 'hd' : 'standard']);
  writeFileSync(join(dir, 'rows.csv'), formatCsv(table));
  writeFileSync(
    join(dir, 'job.yaml'),
    [
      'version: 1',
      `name: ${name}`,
      'output: out',
      'generations:',
      '  - id: ads',
      '    model: ideogram-influencer',
      '    rows: rows.csv',
      '    input:',
      '      prompt: "{{ product }} on a plain background"',
      '      quality: "{{ quality }}"',
      '',
    ].join('\n'),
  );
}

describe('plan and run share one quoting rule', () => {
  it('plan total equals the run reserved and charged total, one preview per price class each', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace('');
    textRowsJob(ws.dir, 12, 'quote-rule');
    const env = envFor(em, SCALE);

    const planned = await runCliCaptured(['plan', ws.jobPath, '--json'], env, ws.dir);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as { total: number; quotes: number };
    expect(plan.quotes).toBe(2);
    expect(await previewCalls(em)).toBe(2);

    const run = await runCliCaptured(['run', ws.jobPath], env, ws.dir);
    expect(run.code, run.stderr).toBe(0);
    expect(await previewCalls(em)).toBe(4); // the run's own two, one per class

    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      const [runRecord] = journal.listRuns();
      if (!runRecord) throw new Error('no run journaled');
      const items = journal.listItems(runRecord.runId);
      expect(items).toHaveLength(12);
      const reserved = items.reduce((sum, item) => sum + (item.quotedCost ?? Number.NaN), 0);
      expect(reserved).toBeCloseTo(plan.total, 6);
    } finally {
      journal.close();
    }
    expect(await ledgerNet(em)).toBeCloseTo(plan.total, 6);
  });

  it('plans a 3,000-row text-only CSV with at most one preview per price class', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace('');
    textRowsJob(ws.dir, 3000, 'quote-rule-rows');
    const planned = await runCliCaptured(['plan', ws.jobPath, '--json'], envFor(em, SCALE), ws.dir);
    expect(planned.code, planned.stderr).toBe(0);
    const plan = JSON.parse(planned.stdout) as {
      total: number;
      quotes: number;
      steps: Array<{ items: number; unitCosts: number[] }>;
    };
    expect(plan.steps[0]?.items).toBe(3000);
    expect(plan.steps[0]?.unitCosts).toEqual([6, 12]);
    expect(plan.total).toBe(1000 * 12 + 2000 * 6);
    expect(plan.quotes).toBeLessThanOrEqual(2);
    expect(await previewCalls(em)).toBeLessThanOrEqual(2);
    expect(await em.admin.ledger()).toEqual([]);
  });
});
