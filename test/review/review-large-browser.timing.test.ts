/**
 * The review page with 10,000 outputs in headless Chromium: the first cards
 * paint and the filters answer (the figures are printed). The fixture is a
 * finished run written with the journal's own ops and a tiny PNG per output,
 * no service involved.
 *
 * The targets themselves (first cards < 2 s, a text filter < 300 ms) are
 * `npm run bench`'s to measure on a quiet machine. This test keeps a margin
 * over them that a second busy process on two cores does not use up, while
 * the regression they guard against still fails it: a filter that rebuilds
 * the listing (about a second at this size) instead of searching it.
 */
import { describe, expect, it } from 'vitest';
import { useChromium } from '../helpers/chromium.js';
import { largeFixture, openLargeReview } from './large-fixture.js';

const COUNT = 10_000;
/** Three times the text filter's target (300 ms), the search box's 100 ms wait included. */
const TEXT_FILTER_BOUND_MS = 900;
/** The review-state filter searches the same listing with no typing wait. */
const REVIEW_FILTER_BOUND_MS = 300;
/** First cards: the 2 s target with room, under the seconds a page built whole took. */
const FIRST_PAINT_BOUND_MS = 3000;
const browser = useChromium();

describe('the review page with 10,000 outputs', () => {
  it('paints its first cards and answers a filter without rebuilding the listing', async () => {
    const fixture = await largeFixture(COUNT);
    const opened = await openLargeReview(browser(), fixture, COUNT);
    const { page, problems } = opened;
    const firstPaint = opened.firstPaintMs;
    // One scene in eight: 1,250 outputs match (the box waits 100 ms for more typing).
    const filtered = await opened.typedFilterMs('harbour', COUNT / 8);
    const review = performance.now();
    await page.selectOption('#f-review', 'approved');
    await page.waitForSelector('#none:not([hidden])', { timeout: 10_000 });
    const reviewFilter = performance.now() - review;

    console.log(
      `review page, ${COUNT} outputs: first cards painted in ${Math.round(firstPaint)} ms, ` +
        `text filter in ${Math.round(filtered)} ms, review-state filter in ${Math.round(reviewFilter)} ms`,
    );
    expect(firstPaint).toBeLessThan(FIRST_PAINT_BOUND_MS);
    expect(filtered).toBeLessThan(TEXT_FILTER_BOUND_MS);
    expect(reviewFilter).toBeLessThan(REVIEW_FILTER_BOUND_MS);
    expect(await page.locator('article.card').count()).toBe(0);
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});
