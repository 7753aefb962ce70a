/**
 * The review page in headless Chromium (Debian's `chromium`; `.ci/run`
 * installs it) after a small emulator run: previews load through the token,
 * `r` on the first output with a note records the rejection in the journal,
 * the filters reduce the cards, `?` shows the keys, and the page's CSP
 * blocks nothing of its own. A missing browser FAILS the test.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { saveScreenshot, untilImagesLoaded, useChromium } from '../helpers/chromium.js';
import { until } from '../helpers/index.js';
import { JOB_NAME, pipelineRun, type RunDone, reviewServer } from './helpers.js';

const browser = useChromium();
let run: RunDone;
beforeAll(async () => {
  run = await pipelineRun('review-browser');
}, 120_000);

describe('the review page in a browser', () => {
  it('rejects with a note from the keyboard, filters, shows help', async () => {
    const { url, base } = await reviewServer(run, 'ana');
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('console', (m) => {
      if (m.type() === 'error') problems.push(m.text());
    });
    page.on('pageerror', (e) => problems.push(e.message));
    const foreign: string[] = [];
    page.on('request', (r) => {
      if (!r.url().startsWith(base)) foreign.push(r.url());
    });
    await page.goto(url, { waitUntil: 'load' });
    const cards = page.locator('article.card');
    await page.waitForSelector('article.card');
    expect(await cards.count()).toBe(4);
    // Previews come from the server, through the token.
    await untilImagesLoaded(page, 1);

    // `r` on the first output, a note, confirm.
    const first = cards.first();
    const id = await first.getAttribute('data-id');
    await page.keyboard.press('r');
    await page.locator('#note-text').waitFor({ state: 'visible' });
    await page.keyboard.type('hands look wrong');
    await page.keyboard.press('Enter');
    await page.waitForSelector(`article.card[data-id="${id}"][data-review="rejected"]`);
    const journal = await openJournal(run.journalPath, { readonly: true });
    const latest = journal.latestReviews(JOB_NAME);
    journal.close();
    expect(latest).toHaveLength(1);
    expect(`${latest[0]?.runId}/${latest[0]?.itemKey}/${latest[0]?.n ?? ''}`).toBe(id);
    expect(latest[0]).toMatchObject({
      decision: 'rejected',
      note: 'hands look wrong',
      reviewer: 'ana',
    });
    expect(await first.textContent()).toContain('hands look wrong');

    // `→` then `a`: the second output approved.
    await page.keyboard.press('ArrowRight');
    await page.keyboard.press('a');
    await page.waitForSelector('article.card[data-review="approved"]');

    // Filters reduce the cards.
    const shown = () => cards.count();
    await page.selectOption('#f-review', 'rejected');
    await until(async () => (await shown()) === 1 || undefined, { what: 'one rejected card' });
    await page.selectOption('#f-review', '');
    await page.selectOption('#f-step', 'clips');
    await until(async () => (await shown()) === 2 || undefined, { what: 'two clip cards' });
    await page.selectOption('#f-step', '');
    await page.fill('#f-text', 'rooftop');
    await until(async () => (await shown()) === 2 || undefined, { what: 'two rooftop cards' });
    await page.fill('#f-text', 'no such words anywhere');
    await until(async () => (await shown()) === 0 || undefined, { what: 'no card' });
    await page.fill('#f-text', '');
    await until(async () => (await shown()) === 4 || undefined, { what: 'every card again' });

    // `?` shows the keys (focus out of the search box first).
    await page.locator('h1').click();
    expect(await page.locator('#help').isVisible()).toBe(false);
    await page.keyboard.press('?');
    expect(await page.locator('#help').isVisible()).toBe(true);
    expect(await page.locator('#help').textContent()).toContain('approve');

    expect(problems).toEqual([]);
    expect(foreign).toEqual([]);
    await saveScreenshot(page, 'review-page.png');
  }, 60_000);
});
