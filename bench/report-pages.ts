/**
 * report.html and the review page at 10,000 and 100,000 outputs,
 * side by side in one run: `ibatch status` and `ibatch report`
 * through the real CLI (`node bin/ibatch.js`, so `npm run build` first) on a
 * finished run's journal (bench/large-outputs.ts), the size of the
 * report.html it writes,
 * and in headless Chromium the time to the first cards of the report (from
 * `file:`) and of the review page (served as `ibatch review` serves it), a
 * text filter and a decision's round trip on that page.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { Browser, Page } from 'playwright-core';
import { openJournal } from '../src/journal/index.js';
import { REPORT_FILE } from '../src/outputs/index.js';
import { newToken, startReviewServer } from '../src/review/server/index.js';
import { launchChromium } from '../test/helpers/chromium-launch.js';
import { buildLargeOutputs, LARGE_JOB, type LargeFixture } from './large-outputs.js';
import type { Benchmark, BenchRow } from './types.js';

const BIN = fileURLToPath(new URL('../bin/ibatch.js', import.meta.url));
const SIZES = [10_000, 100_000] as const;

interface PageFigures {
  readonly htmlBytes: number;
  readonly reportMs: number;
  readonly statusMs: number;
  readonly reportPaintMs: number;
  readonly reviewPaintMs: number;
  readonly decisionMs: number;
  readonly textFilterMs: number;
}

/** `ibatch COMMAND` on the fixture's journal: its wall time, process start to exit. */
function timedCli(dir: string, fixture: LargeFixture, args: readonly string[]): number {
  const start = performance.now();
  const result = spawnSync(process.execPath, [BIN, ...args, '--journal', fixture.journalPath], {
    cwd: dir,
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`${args[0]} exited ${result.status}: ${result.stderr}`);
  return performance.now() - start;
}

/** From navigating to `url` until `selector` (a card's image) is in the page. */
async function firstPaint(browser: Browser, url: string, selector: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const start = performance.now();
  await page.goto(url, { waitUntil: 'commit' });
  await page.waitForSelector(selector, { timeout: 60_000 });
  return { page, ms: performance.now() - start };
}

/**
 * Approves the review page's first card with the keyboard (the server
 * records it and answers the card as the journal now shows it): the ms from
 * the key to that card shown approved. Also the 100,000-output page test's.
 */
export async function timedApproval(page: Page): Promise<number> {
  const id = await page.locator('article.card').first().getAttribute('data-id');
  await page.locator('h1').click();
  const start = performance.now();
  await page.keyboard.press('a');
  await page.waitForSelector(`article.card[data-id="${id}"][data-review="approved"]`, {
    timeout: 60_000,
  });
  return performance.now() - start;
}

/**
 * Types `text` in the review page's filter box: the ms until the count line
 * reads the first 100 of the `matching` outputs shown (the box's 100 ms wait
 * for more typing included). Also the page tests'.
 */
export async function timedTextFilter(page: Page, text: string, matching: number): Promise<number> {
  const start = performance.now();
  await page.fill('#f-text', text);
  await page.waitForSelector(`#count:text-is("${Math.min(100, matching)} of ${matching} shown")`, {
    timeout: 60_000,
  });
  return performance.now() - start;
}

/** The review page's first cards, a text filter (one scene in eight), then the first card approved with the keyboard. */
async function reviewFigures(browser: Browser, fixture: LargeFixture, count: number) {
  const journal = await openJournal(fixture.journalPath, { job: `${LARGE_JOB} (bench)` });
  const server = await startReviewServer({
    journal,
    jobName: LARGE_JOB,
    reviewer: 'bench',
    token: newToken(),
  });
  try {
    const { page, ms } = await firstPaint(browser, server.url, 'article.card img');
    await page.waitForSelector(`#count:text-is("100 of ${count} shown")`, { timeout: 60_000 });
    const textFilterMs = await timedTextFilter(page, 'harbour', count / 8);
    const decisionMs = await timedApproval(page);
    await page.close();
    return { reviewPaintMs: ms, textFilterMs, decisionMs };
  } finally {
    await server.close();
    journal.close();
  }
}

async function measure(browser: Browser, count: number): Promise<PageFigures> {
  const dir = mkdtempSync(join(tmpdir(), 'ibatch-bench-pages-'));
  try {
    const fixture = await buildLargeOutputs(dir, count);
    const statusMs = timedCli(dir, fixture, ['status', fixture.runId, '--json']);
    const reportMs = timedCli(dir, fixture, ['report']);
    const file = join(fixture.out, REPORT_FILE);
    const report = await firstPaint(browser, pathToFileURL(file).href, 'article.tile img');
    await report.page.close();
    return {
      htmlBytes: statSync(file).size,
      reportMs,
      statusMs,
      reportPaintMs: report.ms,
      ...(await reviewFigures(browser, fixture, count)),
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const reportPages: Benchmark = async () => {
  const browser = await launchChromium();
  const figures: PageFigures[] = [];
  try {
    for (const count of SIZES) figures.push(await measure(browser, count));
  } finally {
    await browser.close();
  }
  const [small, large] = figures;
  if (!small || !large) throw new Error('a size was not measured');
  const rows: BenchRow[] = [];
  const row = (
    metric: string,
    unit: string,
    value: (f: PageFigures) => number,
    max?: number,
    note?: string,
  ) => {
    for (const [i, f] of figures.entries()) {
      const count = SIZES[i] ?? 0;
      const v = value(f);
      rows.push({
        group: 'pages',
        metric: `${metric}, ${count.toLocaleString('en')} outputs`,
        value: v,
        unit,
        ...(max !== undefined && count === 100_000 ? { target: `< ${max}`, pass: v < max } : {}),
        ...(note ? { note } : {}),
      });
    }
  };
  row('report.html size', 'bytes', (f) => f.htmlBytes, 5_000_000, 'the rest in report-data/');
  row('ibatch status', 'ms', (f) => f.statusMs, undefined, 'node bin/ibatch.js status RUN --json');
  row('ibatch report', 'ms', (f) => f.reportMs, 60_000, 'node bin/ibatch.js report, start to exit');
  row(
    'report.html first cards',
    'ms',
    (f) => f.reportPaintMs,
    2000,
    'from file:, headless Chromium',
  );
  row('review page first cards', 'ms', (f) => f.reviewPaintMs, 2000, 'headless Chromium');
  for (const [i, f] of figures.entries()) {
    const count = SIZES[i] ?? 0;
    rows.push({
      group: 'pages',
      metric: `review text filter, ${count.toLocaleString('en')} outputs`,
      value: f.textFilterMs,
      unit: 'ms',
      // The target is the 10,000-output page's; at 100,000 it is measured, not held to it.
      ...(count === 10_000 ? { target: '< 300', pass: f.textFilterMs < 300 } : {}),
      note: "one scene in eight, the box's 100 ms typing wait included",
    });
  }
  row('review decision round trip', 'ms', (f) => f.decisionMs, 500, 'key a to the card approved');
  rows.push({
    group: 'pages',
    metric: 'ibatch report time, 100k / 10k outputs',
    value: large.reportMs / small.reportMs,
    unit: 'ratio',
    note: 'linear is 10',
  });
  return rows;
};
