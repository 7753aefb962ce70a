/**
 * Opens a generated report.html in headless Chromium (Debian's `chromium`;
 * `.ci/run` installs it) and checks what a person would see: every image
 * loads, the totals match the manifest, nothing injected runs. Saves a
 * screenshot to test-artifacts/report.png. A missing browser FAILS the test.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { ManifestWriter, readManifest, writeReport } from '../../src/outputs/index.js';
import { useChromium } from '../helpers/chromium.js';
import { tempDir } from '../helpers/index.js';
import { makePng, SAMPLES } from '../uploads/fixtures/media-samples.js';
import { fixtureReport } from './fixtures/report-data.js';

const ARTIFACTS = path.resolve('test-artifacts');

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

    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const blocked: string[] = [];
    page.on('request', (request) => {
      if (!request.url().startsWith('file:')) blocked.push(request.url());
    });
    await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
    const imageCount = await page.locator('img').count();
    expect(imageCount).toBe(readManifest(dir).filter((r) => r.file && r.kind === 'image').length);
    // Lazy images load when near the viewport: bring each into view, then wait for all.
    for (const img of await page.locator('img').all()) await img.scrollIntoViewIfNeeded();
    // The tsconfig has no DOM lib: page-side code is passed as strings.
    await page.waitForFunction(
      '[...document.images].every((img) => img.complete && img.naturalWidth > 0)',
      undefined,
      { timeout: 10_000 },
    );
    const widths = (await page.evaluate(
      '[...document.images].map((img) => img.naturalWidth)',
    )) as number[];
    expect(widths).toEqual(Array(imageCount).fill(64));

    const shown = async (name: string) =>
      Number(await page.locator(`[data-total="${name}"]`).textContent());
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

    mkdirSync(ARTIFACTS, { recursive: true });
    await page.evaluate('window.scrollTo(0, 0)');
    await page.screenshot({ path: path.join(ARTIFACTS, 'report.png'), fullPage: true });
    await page.close();
  }, 60_000);
});
