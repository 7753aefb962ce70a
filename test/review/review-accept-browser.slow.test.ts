/**
 * The review acceptance loop in headless Chromium, the ledger as the judge:
 * a job of 5 images and a clip made from each, run with the CLI on the
 * emulator; on the review page 3 images approved and 2 rejected with the
 * keyboard (a note on one); a reload keeps the decisions; the next `run`
 * makes exactly the 2 rejected images and the 2 clips made from them (from
 * the new images), keeps the old files, and the manifest shows both versions
 * with their review state; a reload shows the new outputs unreviewed.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { useChromium } from '../helpers/chromium.js';
import { manifestRows, said, until } from '../helpers/index.js';
import { charges } from '../scheduler/helpers.js';
import { type ManifestLine, photosAndClipsRan, reviewServer } from './helpers.js';

const JOB_NAME = 'review-accept';
type Row = ManifestLine;
const idOf = (r: Row) => `${r.runId}/${r.item}/${r.n ?? ''}`;
const cardOf = (id: string, review?: string) =>
  `article.card[data-id="${id}"]${review ? `[data-review="${review}"]` : ''}`;

const EDITED = 'a model on a harbour at dusk, eyes open';
const browser = useChromium();

/** Waits until the page shows exactly `n` cards. */
async function cardsShown(page: Page, n: number): Promise<void> {
  await until(async () => (await page.locator('article.card').count()) === n || undefined, {
    what: `${n} cards`,
  });
}

describe('review acceptance: decide on the page, run makes the rejected ones again', () => {
  it('3 approved and 2 rejected with the keyboard survive a reload; run remakes exactly the 2 and their clips', async () => {
    const { em, ws, cli, out, rows } = await photosAndClipsRan(JOB_NAME, [
      'beach',
      'rooftop',
      'park',
      'harbour',
      'market',
    ]);
    const photos = rows.filter((r) => r.step === 'photos');
    expect(photos).toHaveLength(5);

    const { url } = await reviewServer(ws, 'ana', JOB_NAME);
    const page = await browser().newPage({ viewport: { width: 1280, height: 900 } });
    const problems: string[] = [];
    page.on('pageerror', (e) => problems.push(e.message));
    await page.goto(url, { waitUntil: 'load' });
    await cardsShown(page, 10);
    await page.selectOption('#f-step', 'photos');
    await cardsShown(page, 5);
    // The tsconfig has no DOM lib: the card's id read as the page has it.
    const shownIds = await page
      .locator('article.card')
      .evaluateAll((cards) =>
        cards.map((c) => (c as unknown as { dataset: { id: string } }).dataset.id),
      );
    expect([...shownIds].sort()).toEqual(photos.map(idOf).sort());
    // Out of the filter box: the keys go to the page. The first card is selected.
    await page.locator('h1').click();
    // `a` approves; `r` rejects, a note typed in its box; `e` rejects, a prompt typed in its box.
    const decideWithKeys = async (i: number, key: 'a' | 'r' | 'e', text?: string) => {
      if (i > 0) await page.keyboard.press('ArrowRight');
      await page.keyboard.press(key);
      if (key !== 'a') {
        await page
          .locator(key === 'r' ? '#note-text' : '#prompt-text')
          .waitFor({ state: 'visible' });
        if (key === 'e') await page.keyboard.press('ControlOrMeta+A');
        if (text) await page.keyboard.type(text);
        await page.keyboard.press('Enter');
      }
      const state = key === 'a' ? 'approved' : 'rejected';
      await page.waitForSelector(cardOf(shownIds[i] ?? '', state));
    };
    await decideWithKeys(0, 'a');
    await decideWithKeys(1, 'r', 'eyes closed');
    await decideWithKeys(2, 'a');
    await decideWithKeys(3, 'e', EDITED);
    await decideWithKeys(4, 'a');
    const approvedIds = [shownIds[0], shownIds[2], shownIds[4]];
    const rejectedIds = [shownIds[1], shownIds[3]];
    const rejected = photos.filter((r) => rejectedIds.includes(idOf(r)));
    expect(rejected).toHaveLength(2);

    // A reload: the decisions come back from the journal.
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('article.card');
    for (const id of approvedIds) await page.waitForSelector(cardOf(id ?? '', 'approved'));
    for (const id of rejectedIds) await page.waitForSelector(cardOf(id ?? '', 'rejected'));
    expect(await page.locator(cardOf(shownIds[1] ?? '')).textContent()).toContain('eyes closed');

    // The next run: exactly the 2 rejected images and the 2 clips made from them.
    const again = await cli('run', ws.jobPath);
    expect(again.code, said(again)).toBe(0);
    const made = (await charges(em)).slice(10);
    expect(made).toHaveLength(4);
    const after = manifestRows<ManifestLine>(path.join(out, 'manifest.jsonl'));
    const newRows = after.filter((r) => r.current && !photos.some((p) => p.runId === r.runId));
    expect(newRows).toHaveLength(4);
    const newPhotos = newRows.filter((r) => r.step === 'photos');
    expect(newPhotos.map((r) => r.item).sort()).toEqual(rejected.map((r) => r.item).sort());
    const newClips = newRows.filter((r) => r.step === 'clips');
    expect(newClips.map((r) => r.sourceFile).sort()).toEqual(newPhotos.map((r) => r.file).sort());
    expect(made.flatMap((c) => c.generationIds ?? []).sort()).toEqual(
      newRows.map((r) => r.generationId).sort(),
    );
    // Both versions in the manifest: the old ones marked and kept on disk,
    // moved aside; the remade ones took their readable names.
    const oldRowOf = (old: (typeof rejected)[number]) =>
      after.find((r) => r.runId === old.runId && r.item === old.item && r.n === old.n);
    for (const old of rejected) {
      const row = oldRowOf(old);
      expect(row).toMatchObject({ review: 'rejected', current: false, sha256: old.sha256 });
      expect(row?.file).not.toBe(old.file);
      expect(existsSync(path.join(out, row?.file ?? ''))).toBe(true);
      const remade = newPhotos.find((r) => r.item === old.item);
      expect(remade).toMatchObject({ current: true });
      expect(remade?.review).toBeUndefined();
      expect(remade?.file).toBe(old.file);
    }
    expect(rejected[0] && oldRowOf(rejected[0])?.note).toBe('eyes closed');
    for (const id of approvedIds) {
      expect(after.find((r) => idOf(r) === id)).toMatchObject({
        review: 'approved',
        current: true,
      });
    }
    // Each new clip's request names its new source's generation; the prompt
    // edited on the page went into its item's new request, the other kept the job's.
    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      const promptOf = (r: Row) =>
        (
          journal.listAttempts(r.runId, r.item)[0]?.request as
            | { input?: { prompt?: string } }
            | undefined
        )?.input?.prompt;
      const [noted, edited] = rejected;
      const remadeOf = (old: Row | undefined) => newPhotos.find((r) => r.item === old?.item);
      expect(promptOf(remadeOf(edited) as Row)).toBe(EDITED);
      expect(promptOf(remadeOf(noted) as Row)).toBe(promptOf(noted as Row));
      expect(promptOf(noted as Row)).not.toBe(EDITED);
      for (const clip of newClips) {
        const source = newPhotos.find((p) => p.file === clip.sourceFile);
        const request = journal.listAttempts(clip.runId, clip.item)[0]?.request as {
          generationId?: string;
        };
        expect(request.generationId).toBe(source?.generationId);
      }
    } finally {
      journal.close();
    }

    // A reload: the new outputs are there, unreviewed; the rejected ones are gone from the page.
    await page.reload({ waitUntil: 'load' });
    await page.waitForSelector('article.card');
    await page.selectOption('#f-step', '');
    await cardsShown(page, 10);
    for (const row of newRows) await page.waitForSelector(cardOf(idOf(row), 'unreviewed'));
    for (const id of rejectedIds) expect(await page.locator(cardOf(id ?? '')).count()).toBe(0);
    for (const id of approvedIds) await page.waitForSelector(cardOf(id ?? '', 'approved'));
    expect(problems).toEqual([]);
    await page.close();
  }, 180_000);
});
