/**
 * The report of a real run: the pipeline job (uploads, training, photos,
 * image-to-video) runs on the emulator, then its `report.html` is opened in
 * headless Chromium (Debian's `chromium`; `.ci/run` installs it). Every image
 * must load, the totals shown must match the manifest (plus the training
 * charge) and the emulator's ledger. Saves test-artifacts/report-run.png.
 * A missing browser FAILS the test.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { readManifest } from '../../src/outputs/index.js';
import {
  loadedImageWidths,
  openReport,
  saveScreenshot,
  shownTotal,
  useChromium,
} from '../helpers/chromium.js';
import { emulatorEnv, tempDir } from '../helpers/index.js';
import {
  charges,
  emulators,
  makeWorkspace,
  runJobCli,
} from '../scheduler/fixtures/pipeline/helpers.js';

const browser = useChromium();

describe('report.html of a real run', () => {
  it('shows every output, loads every image, and its totals match manifest and ledger', async () => {
    const em = await emulators({ seed: 21 });
    const dir = tempDir('report-run-browser');
    const job = makeWorkspace(dir, 'job.yaml');
    const result = await runJobCli(job, emulatorEnv(em));
    expect(result.code, result.stdout + result.stderr).toBe(0);

    const out = path.join(dir, 'out');
    const rows = readManifest(out);
    expect(rows).toHaveLength(4);
    // Expected totals from the manifest (each generation once) plus the training.
    const perGeneration = new Map(rows.map((r) => [r.generationId, r.creditsCost ?? 0]));
    const { ledger, trainings } = await charges(em);
    const training = trainings.reduce((sum, t) => sum + t.amount, 0);
    expect(training).toBeGreaterThan(0);
    const charged = [...perGeneration.values()].reduce((a, b) => a + b, 0) + training;
    const ledgerCharged = ledger
      .filter((e) => e.type === 'charge')
      .reduce((a, e) => a + e.amount, 0);
    expect(charged).toBe(ledgerCharged);

    const { page, external } = await openReport(browser(), path.join(out, 'report.html'));

    const imageRows = rows.filter((r) => r.kind === 'image' && r.file);
    expect(await page.locator('img').count()).toBe(imageRows.length);
    expect(await page.locator('video').count()).toBe(rows.length - imageRows.length);
    const widths = await loadedImageWidths(page);
    expect(widths.every((w) => w > 0)).toBe(true);

    const shown = (name: string) => shownTotal(page, name);
    expect(await shown('charged')).toBe(charged);
    expect(await shown('refunded')).toBe(0);
    expect(await shown('net')).toBe(charged);
    expect(await shown('outputs')).toBe(rows.length);
    const text = (await page.locator('body').textContent()) ?? '';
    for (const row of rows) expect(text).toContain(row.prompt ?? '<no prompt>');
    expect(text).toContain('Mia Pipeline');
    // The training row names the influencer the service created.
    const influencers = await fetch(`${em.baseUrl}/influencers`, {
      headers: { Authorization: `Bearer ${em.accounts[0]?.apiKey}` },
    });
    const { characters } = (await influencers.json()) as { characters: { id: string }[] };
    expect(characters).toHaveLength(1);
    expect(text).toContain(characters[0]?.id);
    expect(external).toEqual([]);

    await saveScreenshot(page, 'report-run.png');
  }, 60_000);
});
