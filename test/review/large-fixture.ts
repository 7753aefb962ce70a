/** The large-job fixture (bench/large-outputs.ts) in a temp dir removed after the test, and its review page. */
import type { Browser, Page } from 'playwright-core';
import { buildLargeOutputs, LARGE_JOB, type LargeFixture } from '../../bench/large-outputs.js';
import { timedTextFilter } from '../../bench/report-pages.js';
import { tempDir } from '../helpers/index.js';
import { reviewServer } from './helpers.js';

export type { LargeFixture } from '../../bench/large-outputs.js';

export function largeFixture(count: number): Promise<LargeFixture> {
  return buildLargeOutputs(tempDir('review-large'), count);
}

export interface OpenedReview {
  readonly page: Page;
  /** Uncaught errors of the page. */
  readonly problems: string[];
  /** From navigating to the first card's image in the DOM, and its page of 100 counted. */
  readonly firstPaintMs: number;
  /** Waits until the count line reads `text`. */
  shown(text: string): Promise<unknown>;
  /** Types `text` in the filter box; the ms until the first 100 of `matching` outputs are counted. */
  typedFilterMs(text: string, matching: number): Promise<number>;
}

/** The review page of `fixture` (served like `ibatch review`), opened and timed to its first cards. */
export async function openLargeReview(
  browser: Browser,
  fixture: LargeFixture,
  count: number,
): Promise<OpenedReview> {
  const { url } = await reviewServer(fixture, 'ana', LARGE_JOB);
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const problems: string[] = [];
  page.on('pageerror', (e) => problems.push(e.message));
  // A selector, not page-side code: the page's CSP forbids evaluating strings.
  const shown = (text: string) =>
    page.waitForSelector(`#count:text-is("${text}")`, { timeout: 30_000 });
  const opened = performance.now();
  await page.goto(url);
  await page.waitForSelector('article.card img');
  const firstPaintMs = performance.now() - opened;
  await shown(`100 of ${count} shown`);
  const typedFilterMs = (text: string, matching: number) => timedTextFilter(page, text, matching);
  return { page, problems, firstPaintMs, shown, typedFilterMs };
}
