/**
 * report.html and the review page with 100,000 outputs in
 * headless Chromium, on one fixture (bench/large-outputs.ts): the report is
 * rebuilt from the journal as `ibatch report` does, stays under 5 MB with
 * the rest in report-data/, and paints its first cards from `file:`; the
 * review page paints its first cards, and a filter and a decision each make
 * a round trip that is measured and bounded (a decision
 * used to rebuild the whole listing: ~10 s at this size). Figures printed.
 * The targets are `npm run bench`'s (bench/report-pages.ts: first cards
 * < 2 s, a decision < 500 ms, a rebuild < 60 s). The bounds here leave a
 * busy machine room over them (a second process on two cores, other tests)
 * and still fail what they guard against: a report that painted in seconds,
 * a listing rebuilt per decision or filter (seconds at this size), a
 * quadratic report rebuild (minutes).
 */
import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { timedApproval } from '../../bench/report-pages.js';
import { openJournal } from '../../src/journal/index.js';
import { REPORT_FILE } from '../../src/outputs/index.js';
import { writeRunOutputs } from '../../src/scheduler/index.js';
import { useChromium } from '../helpers/chromium.js';
import { type LargeFixture, largeFixture, openLargeReview } from './large-fixture.js';

const COUNT = 100_000;
/** What rebuilding the report may take here: well above the bench's 60 s, well below 527 s. */
const BUILD_BOUND_MS = 180_000;
/** First cards of either page: the 2 s target with room, under the 4.8 s the old report took. */
const FIRST_PAINT_BOUND_MS = 3000;
/** A filter or a decision: each searches or patches the listing; a rebuild took seconds. */
const ROUND_TRIP_BOUND_MS = 2000;
const browser = useChromium();
let fixture: LargeFixture;

beforeAll(async () => {
  fixture = await largeFixture(COUNT);
}, 300_000);

describe('report.html and the review page with 100,000 outputs', () => {
  it(
    'report.html stays under 5 MB and paints its first cards from file: quickly',
    async () => {
      const journal = await openJournal(fixture.journalPath, { readonly: true });
      const built = performance.now();
      try {
        expect(writeRunOutputs(journal, fixture.runId, fixture.out).rows).toBe(COUNT);
      } finally {
        journal.close();
      }
      const buildMs = performance.now() - built;
      const file = path.join(fixture.out, REPORT_FILE);
      const bytes = statSync(file).size;
      const pages = readdirSync(path.join(fixture.out, 'report-data')).length;

      const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
      const problems: string[] = [];
      page.on('pageerror', (e) => problems.push(e.message));
      const opened = performance.now();
      await page.goto(pathToFileURL(file).href, { waitUntil: 'commit' });
      await page.waitForSelector('article.tile img', { timeout: 20_000 });
      const firstPaint = performance.now() - opened;
      console.log(
        `report.html, ${COUNT} outputs: built in ${Math.round(buildMs)} ms, ` +
          `${(bytes / 1e6).toFixed(2)} MB + ${pages} page files, first cards in ${Math.round(firstPaint)} ms`,
      );
      expect(bytes).toBeLessThan(5_000_000);
      // 200 cards inline, the rest in pages of 500.
      expect(pages).toBe(Math.ceil((COUNT - 200) / 500));
      expect(firstPaint).toBeLessThan(FIRST_PAINT_BOUND_MS);
      // Linear, not the quadratic rebuild that took minutes (527 s): the bench's
      // target is 60 s; this bound leaves a busy machine room (a second process
      // on two cores, other tests) and still fails the quadratic one.
      expect(buildMs).toBeLessThan(BUILD_BOUND_MS);
      expect(problems).toEqual([]);
      await page.close();
    },
    BUILD_BOUND_MS + 60_000,
  );

  it('the review page paints its first cards; a filter and a decision answer without a rebuild', async () => {
    const opened = await openLargeReview(browser(), fixture, COUNT);
    const { page, problems, shown } = opened;
    const firstPaint = opened.firstPaintMs;
    // One scene in eight: 12,500 outputs match (the box waits 100 ms for more typing).
    const filtered = await opened.typedFilterMs('harbour', COUNT / 8);

    // The first card approved with the keyboard, to the card shown approved.
    const decision = await timedApproval(page);
    // The review-state filter then finds exactly it.
    const reviewed = performance.now();
    await page.selectOption('#f-review', 'approved');
    await shown('1 of 1 shown');
    const reviewFilter = performance.now() - reviewed;

    console.log(
      `review page, ${COUNT} outputs: first cards in ${Math.round(firstPaint)} ms, ` +
        `text filter in ${Math.round(filtered)} ms, decision round trip in ${Math.round(decision)} ms, ` +
        `review-state filter after it in ${Math.round(reviewFilter)} ms`,
    );
    expect(firstPaint).toBeLessThan(FIRST_PAINT_BOUND_MS);
    expect(filtered).toBeLessThan(ROUND_TRIP_BOUND_MS);
    expect(decision).toBeLessThan(ROUND_TRIP_BOUND_MS);
    expect(reviewFilter).toBeLessThan(ROUND_TRIP_BOUND_MS);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});
