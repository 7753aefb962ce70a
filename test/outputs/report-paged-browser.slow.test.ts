/**
 * A report too long for one document: the first rows inline, the
 * rest in `report-data/` page files the page adds as the reader scrolls or
 * presses "show more", under the same CSP (a nonce, fresh per render), from
 * `file:` in headless Chromium. A rewrite replaces the page files; a short
 * report leaves none.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ManifestRow, REPORT_FILE, writeReport } from '../../src/outputs/index.js';
import { openReport, useChromium } from '../helpers/chromium.js';
import { tempDir, until } from '../helpers/index.js';
import { makePng } from '../uploads/fixtures/media-samples.js';
import { fixtureReport, HOSTILE_PROMPT } from './fixtures/report-data.js';
import { FIXTURE_ROWS } from './fixtures/rows.js';

const browser = useChromium();
const COUNT = 1_200;

/** `count` image outputs (one PNG on disk shared by all), the last with a hostile prompt. */
function manyRows(dir: string, count: number): ManifestRow[] {
  const base = FIXTURE_ROWS.find((r) => r.kind === 'image' && r.file);
  if (!base) throw new Error('the fixture has no image row');
  mkdirSync(path.join(dir, 'portraits'), { recursive: true });
  writeFileSync(path.join(dir, 'portraits', 'one.png'), makePng(8, 8, [200, 80, 60]));
  return Array.from({ length: count }, (_, i) => ({
    ...base,
    item: `take=${i + 1}`,
    generationId: `g-${i + 1}`,
    vars: { take: String(i + 1) },
    prompt: i === count - 1 ? HOSTILE_PROMPT : `take ${i + 1}`,
    file: 'portraits/one.png',
  }));
}

describe('a long report.html', () => {
  it('pages its cards into report-data/ and loads one as the reader nears the end or presses more', async () => {
    const dir = tempDir('report-paged');
    const rows = manyRows(dir, COUNT);
    const file = writeReport(dir, { ...fixtureReport(), rows });
    const doc = readFileSync(file, 'utf8');
    const pages = readdirSync(path.join(dir, 'report-data'));
    // 200 inline, then pages of 500: two page files for 1,200 cards.
    expect(pages).toHaveLength(2);
    expect(doc.match(/<article /g)).toHaveLength(200);
    const nonce = /nonce-([A-Za-z0-9+/=]+)/.exec(doc)?.[1];
    expect(nonce).toBeDefined();
    expect(doc).toContain(`<script nonce="${nonce}">`);
    for (const page of pages) {
      const text = readFileSync(path.join(dir, 'report-data', page), 'utf8');
      expect(text).not.toContain(HOSTILE_PROMPT);
    }

    const { page, external } = await openReport(browser(), file);
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    const cards = () => page.locator('article.tile').count();
    expect(await cards()).toBe(200);
    // Scrolling near the end of the cards brings one page (not all: it pushes the end away).
    await page.locator('article.tile').last().scrollIntoViewIfNeeded();
    await until(async () => (await cards()) === 700 || undefined, { what: 'the second page' });
    // The button brings the next one (clicked where it is, without scrolling to it).
    await page.locator('button.more').dispatchEvent('click');
    await until(async () => (await cards()) === COUNT || undefined, { what: 'the last page' });
    expect(await page.locator('button.more').isHidden()).toBe(true);
    await page.getByRole('button', { name: 'video' }).click();
    expect(await page.locator('article.tile:visible').count()).toBe(0);
    await page.getByRole('button', { name: 'image' }).click();
    expect(await page.locator('article.tile:visible').count()).toBe(COUNT);
    await page.locator('article.tile').last().scrollIntoViewIfNeeded();
    const lastImage = 'document.querySelector("article.tile:last-child img").naturalWidth';
    await until(async () => (await page.evaluate(lastImage)) === 8 || undefined, {
      what: 'the last card image',
    });
    // The hostile prompt of the last (paged) card is text, not markup.
    expect(await page.locator('article.tile .prompt').last().textContent()).toBe(HOSTILE_PROMPT);
    expect(await page.evaluate('window.__pwned')).toBeUndefined();
    expect(external).toEqual([]);
    expect(problems).toEqual([]);
    await page.close();

    // A rewrite replaces the page files; a short report leaves none.
    writeReport(dir, { ...fixtureReport(), rows });
    const again = readdirSync(path.join(dir, 'report-data'));
    expect(again).toHaveLength(2);
    expect(again.some((name) => pages.includes(name))).toBe(false);
    writeReport(dir, fixtureReport());
    expect(existsSync(path.join(dir, 'report-data'))).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['portraits', REPORT_FILE]);
  }, 60_000);

  it('loads pages while a filter leaves the screen empty', async () => {
    const dir = tempDir('report-paged-filter');
    const rows = manyRows(dir, COUNT);
    // One clip, in the last page: the video filter must fetch pages to find it.
    const last = rows[COUNT - 1];
    if (last) rows[COUNT - 1] = { ...last, kind: 'video', contentType: 'video/mp4' };
    const { page } = await openReport(browser(), writeReport(dir, { ...fixtureReport(), rows }));
    await page.getByRole('button', { name: 'video' }).click();
    await until(
      async () => (await page.locator('article.tile:visible').count()) === 1 || undefined,
      {
        what: 'the clip of the last page',
      },
    );
    expect(await page.locator('article.tile').count()).toBe(COUNT);
    await page.close();
  }, 60_000);
});
