/**
 * Opens a generated report.html in headless Chromium (Debian's `chromium`;
 * `.ci/run` installs it) and checks what a person would see: every image
 * loads, the totals match the manifest, nothing injected runs. Saves a
 * screenshot to test-artifacts/report.png. A missing browser FAILS the test.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ManifestWriter, readManifest, writeReport } from '../../src/outputs/index.js';
import {
  loadedImageWidths,
  openReport,
  saveScreenshot,
  shownTotal,
  useChromium,
} from '../helpers/chromium.js';
import { tempDir } from '../helpers/index.js';
import { makePng, SAMPLES } from '../uploads/fixtures/media-samples.js';
import { fixtureReport } from './fixtures/report-data.js';

const browser = useChromium();

describe('report.html in a browser', () => {
  it('loads every image, shows the manifest totals, runs no injected script', async () => {
    const dir = tempDir('report-browser');
    const data = fixtureReport();
    const colours: [number, number, number][] = [
      [230, 90, 60],
      [60, 140, 230],
    ];
    const writer = ManifestWriter.open(dir);
    for (const [i, row] of data.rows.entries()) {
      if (row.file) {
        mkdirSync(path.dirname(path.join(dir, row.file)), { recursive: true });
        const bytes = row.kind === 'image' ? makePng(64, 64, colours[i % 2]!) : SAMPLES.mp4;
        writeFileSync(path.join(dir, row.file), bytes);
      }
      writer.append(row);
    }
    writer.close();
    const file = writeReport(dir, { ...data, rows: readManifest(dir) });

    // Expected totals straight from the manifest: each generation charged once.
    const charges = new Map<string, { cost: number; refunded: boolean }>();
    for (const row of readManifest(dir)) {
      charges.set(row.generationId ?? `${row.step}/${row.item}`, {
        cost: row.creditsCost ?? 0,
        refunded: row.refunded,
      });
    }
    const charged = [...charges.values()].reduce((sum, c) => sum + c.cost, 0);
    const refunded = [...charges.values()].reduce((sum, c) => sum + (c.refunded ? c.cost : 0), 0);

    const { page, external: blocked } = await openReport(browser(), file);
    const imageCount = await page.locator('img').count();
    expect(imageCount).toBe(readManifest(dir).filter((r) => r.file && r.kind === 'image').length);
    const widths = await loadedImageWidths(page);
    expect(widths).toEqual(Array(imageCount).fill(64));

    const shown = (name: string) => shownTotal(page, name);
    expect(await shown('charged')).toBe(charged);
    expect(await shown('refunded')).toBe(refunded);
    expect(await shown('net')).toBe(charged - refunded);
    expect(await shown('outputs')).toBe(readManifest(dir).filter((r) => r.file).length);

    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(blocked).toEqual([]);

    // The filter script works (it is allowed by the CSP hash).
    await page.getByRole('button', { name: 'video' }).click();
    expect(await page.locator('article.tile:visible').count()).toBe(1);
    await page.getByRole('button', { name: 'all' }).click();

    await saveScreenshot(page, 'report.png');
  }, 60_000);
});
