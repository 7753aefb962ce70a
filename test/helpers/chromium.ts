/**
 * Headless Debian Chromium for browser tests (`.ci/run` installs it; launched
 * by chromium-launch.ts). A missing browser fails the test with the install
 * command: a browser test never skips.
 */
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Browser, BrowserContextOptions, Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';
import { launchChromium } from './chromium-launch.js';
import { until } from './until.js';

/** One browser for the test file: launched before its tests, closed after. */
export function useChromium(): () => Browser {
  let browser: Browser | undefined;
  beforeAll(async () => {
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => {
    if (!browser) throw new Error('the browser is not running');
    return browser;
  };
}

/**
 * A report page opened from disk (1280x900 unless `options` say otherwise,
 * e.g. a `timezoneId` and `locale`); `external` collects every request that
 * is not `file:`.
 */
export async function openReport(
  browser: Browser,
  file: string,
  options: BrowserContextOptions = {},
): Promise<{ page: Page; external: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 }, ...options });
  const external: string[] = [];
  page.on('request', (request) => {
    if (!request.url().startsWith('file:')) external.push(request.url());
  });
  await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
  return { page, external };
}

/**
 * Waits until the page has at least `atLeast` images and all have loaded.
 * Polled with `page.evaluate` (run by the debugger protocol): `waitForFunction`
 * compiles its predicate inside the page, which the report's and the review
 * page's CSP (no 'unsafe-eval') refuses whenever it has to poll.
 */
export async function untilImagesLoaded(page: Page, atLeast = 0): Promise<void> {
  // The tsconfig has no DOM lib: page-side code is passed as strings.
  const loaded = `document.images.length >= ${atLeast} && [...document.images].every((img) => img.complete && img.naturalWidth > 0)`;
  await until(async () => (await page.evaluate(loaded)) === true || undefined, {
    timeoutMs: 10_000,
    what: 'the images to load',
  });
}

/** Brings every (lazy) image into view, waits until all have loaded; their natural widths. */
export async function loadedImageWidths(page: Page): Promise<number[]> {
  for (const img of await page.locator('img').all()) await img.scrollIntoViewIfNeeded();
  await untilImagesLoaded(page);
  return (await page.evaluate('[...document.images].map((img) => img.naturalWidth)')) as number[];
}

/** The number the report shows in its `data-total="name"` cell. */
export async function shownTotal(page: Page, name: string): Promise<number> {
  return Number(await page.locator(`[data-total="${name}"]`).textContent());
}

/**
 * Saves a screenshot under test-artifacts/ (for a human to look at), closes
 * the page and returns the file: the whole page, or with `fullPage: false`
 * the viewport only (a picture of a known size to attach to the test output),
 * scrolled so that the element `from` (a CSS selector) is at its top.
 */
export async function saveScreenshot(
  page: Page,
  name: string,
  { fullPage = true, from }: { fullPage?: boolean; from?: string } = {},
): Promise<string> {
  const dir = path.resolve('test-artifacts');
  mkdirSync(dir, { recursive: true });
  await page.evaluate('window.scrollTo(0, 0)');
  // Page-side code as a string (no DOM lib in the tsconfig).
  if (from) await page.evaluate(`document.querySelector(${JSON.stringify(from)}).scrollIntoView()`);
  const file = path.join(dir, name);
  await page.screenshot({ path: file, fullPage });
  await page.close();
  return file;
}
