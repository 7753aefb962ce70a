/**
 * The report of a real run: the pipeline job (uploads, training, photos,
 * image-to-video) runs on the emulator, then its `report.html` is opened in
 * headless Chromium (Debian's `chromium`; `.ci/run` installs it). Every image
 * must load, the totals shown must match the manifest (plus the training
 * charge) and the emulator's ledger. What a person reads: cards
 * titled by the item's values, each clip linking the image it was made from,
 * times in the reader's time zone with the finish time and the duration, one
 * cost unit. Saves test-artifacts/report-run.png (whole page) and
 * report-run-view.png (the first 1280x900 screen, attached to the test's
 * output). A missing browser FAILS the test.
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

/** What the page should show for `iso` in Kolkata (UTC+5:30: no hour-aligned zone hides a bug). */
const kolkata = (iso: string, options: Intl.DateTimeFormatOptions) =>
  new Intl.DateTimeFormat('en-US', { ...options, timeZone: 'Asia/Kolkata' }).format(new Date(iso));

describe('report.html of a real run', () => {
  it('shows every output, loads every image, and its totals match manifest and ledger', async ({
    annotate,
  }) => {
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

    const { page, external } = await openReport(browser(), path.join(out, 'report.html'), {
      timezoneId: 'Asia/Kolkata',
      locale: 'en-US',
    });

    const imageRows = rows.filter((r) => r.kind === 'image' && r.file);
    expect(await page.locator('.thumb img').count()).toBe(imageRows.length);
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

    // Card titles are the item's values, not its key.
    const titles = await page.locator('article.tile .title').allTextContents();
    expect(titles.sort()).toEqual(['beach', 'beach', 'rooftop', 'rooftop']);
    for (const row of rows) expect(titles).not.toContain(row.item);

    // Each clip links the image it was made from (the photo of its scene).
    const clips = page.locator('article.tile[data-kind="video"]');
    expect(await clips.count()).toBe(2);
    for (const clip of await clips.all()) {
      const scene = await clip.locator('.title').textContent();
      const photo = rows.find((r) => r.step === 'photos' && r.vars?.scene === scene);
      const link = clip.locator('a[data-source]');
      expect(await link.getAttribute('href')).toBe(photo?.file);
      // Its picture is shown (loadedImageWidths above waited for every image to load).
      expect(await link.locator('img').getAttribute('src')).toBe(photo?.file);
    }

    // Times in the reader's zone, with the finish time and how long it took.
    const times = page.locator('header time');
    expect(await times.count()).toBe(2);
    for (const time of await times.all()) {
      const iso = (await time.getAttribute('datetime')) ?? '';
      expect(await time.textContent()).toBe(
        kolkata(iso, { dateStyle: 'medium', timeStyle: 'medium' }),
      );
    }
    const [started, finished] = await Promise.all(
      [0, 1].map(async (i) => Date.parse((await times.nth(i).getAttribute('datetime')) ?? '')),
    );
    expect(finished).toBeGreaterThanOrEqual(started ?? 0);
    expect(await page.locator('[data-duration]').textContent()).toMatch(
      /^(\d+ min \d{2} s|\d+ s)$/,
    );
    const event = page.locator('ol.timeline time').first();
    expect(await event.textContent()).toBe(
      kolkata((await event.getAttribute('datetime')) ?? '', { timeStyle: 'medium' }),
    );

    // One cost unit everywhere.
    for (const cost of await page.locator('[data-credits]').allTextContents())
      expect(cost).toMatch(/^\d+(\.\d+)? credits?$/);
    expect(text).not.toMatch(/\d cr\b/);

    await saveScreenshot(page, 'report-run.png');
    const again = await openReport(browser(), path.join(out, 'report.html'), {
      timezoneId: 'Asia/Kolkata',
      locale: 'en-US',
    });
    await loadedImageWidths(again.page);
    const view = await saveScreenshot(again.page, 'report-run-view.png', {
      fullPage: false,
      from: '.filters',
    });
    await annotate(`report screenshot (1280x900): ${view}`, 'screenshot', {
      path: view,
      contentType: 'image/png',
    });
  }, 60_000);
});
