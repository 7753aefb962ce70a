/**
 * Review decisions from scripts (docs/review.md), end to end with
 * the CLI against a real emulator, the ledger as the judge: `reject` and
 * `approve` record decisions that `status`, the manifest and `plan` show; the
 * next `run` makes exactly the rejected image (new key, new seed) and the
 * clip made from it (from the new image), keeping the rejected file marked;
 * `export --approved` copies exactly the approved file with its manifest.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { parseCsv } from '../helpers/csv.js';
import { manifestRows, said } from '../helpers/index.js';
import { type ManifestLine, photosAndClipsRan } from '../review/helpers.js';
import { charges } from '../scheduler/helpers.js';

type Row = ManifestLine;

describe('approve / reject / export with the CLI', () => {
  it('a rejected image is made again (new key, new seed) with its clip; the approved one is exported', async () => {
    const {
      em,
      ws,
      cli,
      out,
      rows: before,
    } = await photosAndClipsRan('review-demo', ['beach', 'rooftop', 'park']);
    const photos = before.filter((r) => r.step === 'photos');
    const [rejected, approved] = photos;
    if (!rejected?.file || !approved?.file) throw new Error('no photos');
    const clipOf = (photo: Row, rows: readonly Row[]) =>
      rows.find((r) => r.step === 'clips' && r.sourceFile === photo.file && r.current);
    const oldClip = clipOf(rejected, before);

    // An unknown file: exit 2 naming it, nothing recorded.
    const typo = await cli('reject', ws.jobPath, rejected.file, 'photos/nope.png');
    expect(typo.code, said(typo)).toBe(2);
    expect(typo.stderr).toContain('photos/nope.png');

    const reject = await cli(
      'reject',
      ws.jobPath,
      rejected.file,
      '--note',
      'eyes closed',
      '--reviewer',
      'ana',
    );
    expect(reject.code, said(reject)).toBe(0);
    expect(reject.stdout).toContain(`rejected ${rejected.file} by ana (eyes closed)`);
    const approve = await cli('approve', ws.jobPath, approved.file);
    expect(approve.code, said(approve)).toBe(0);
    expect(approve.stdout).toContain(`approved ${approved.file} by `);

    const status = await cli('status', ws.jobPath, '--json');
    expect(status.code, said(status)).toBe(0);
    const review = (JSON.parse(status.stdout) as { review: unknown[] }).review;
    expect(review).toEqual([
      { step: 'photos', approved: 1, rejected: 1, unreviewed: 1, superseded: 0, retired: 0 },
      { step: 'clips', approved: 0, rejected: 0, unreviewed: 3, superseded: 0, retired: 0 },
    ]);

    const csv = parseCsv(readFileSync(path.join(out, 'manifest.csv'), 'utf8'));
    const { header } = csv;
    const cell = (line: readonly string[], name: string) => csv.cell(line, name);
    const csvRow = csv.records.find((line) => cell(line, 'file') === rejected.file) ?? [];
    expect(cell(csvRow, 'review')).toBe('rejected');
    expect(cell(csvRow, 'reviewer')).toBe('ana');
    expect(cell(csvRow, 'note')).toBe('eyes closed');
    expect(Number.isNaN(Date.parse(cell(csvRow, 'reviewedAt') ?? ''))).toBe(false);
    expect(header.slice(-4)).toEqual(['review', 'reviewer', 'reviewedAt', 'note']);

    // The plan quotes the rejected image and the clip made from it, nothing else.
    const plan = await cli('plan', ws.jobPath, '--json');
    expect(plan.code, said(plan)).toBe(0);
    const quoted = JSON.parse(plan.stdout) as { total: number; steps: { rejected: number }[] };
    expect(quoted.total).toBe((rejected.creditsCost ?? 0) + (oldClip?.creditsCost ?? 0));
    expect(quoted.steps.map((s) => s.rejected)).toEqual([1, 0]);

    const again = await cli('run', ws.jobPath);
    expect(again.code, said(again)).toBe(0);
    const made = (await charges(em)).slice(6);
    expect(made).toHaveLength(2);
    const keys = made.map((c) => c.idempotencyKey ?? '');
    expect(keys.some((k) => k.includes(rejected.item))).toBe(true);
    expect(keys.some((k) => k.includes('-clips-'))).toBe(true);

    const after = manifestRows<ManifestLine>(path.join(out, 'manifest.jsonl'));
    // The rejected file is moved aside, kept; the remade one takes its readable name.
    const oldRow = after.find((r) => r.runId === rejected.runId && r.item === rejected.item);
    expect(oldRow).toMatchObject({ review: 'rejected', current: false });
    expect(oldRow?.file).not.toBe(rejected.file);
    expect(existsSync(path.join(out, oldRow?.file ?? ''))).toBe(true);
    const remade = after.find((r) => r.item === rejected.item && r.current);
    expect(remade?.file).toBe(rejected.file);
    expect(remade?.review).toBeUndefined();
    // The clip is made again from the new image (its generation id in the request).
    const newClip = remade ? clipOf(remade, after) : undefined;
    expect(newClip?.runId).toBe(remade?.runId);

    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      const seedOf = (runId: string, itemKey: string) => {
        const request = journal.listAttempts(runId, itemKey)[0]?.request;
        return (request as { input?: { seed?: number } } | undefined)?.input?.seed;
      };
      const newSeed = seedOf(remade?.runId ?? '', rejected.item);
      expect(newSeed).not.toBe(seedOf(rejected.runId, rejected.item));
      expect(newSeed).toBeGreaterThanOrEqual(1);
      const clipRequest = journal.listAttempts(newClip?.runId ?? '', newClip?.item ?? '')[0]
        ?.request as { generationId?: string };
      expect(clipRequest.generationId).toBe(remade?.generationId);
    } finally {
      journal.close();
    }

    // Remade and not rejected: done. Nothing more is made.
    const third = await cli('run', ws.jobPath);
    expect(third.code, said(third)).toBe(0);
    expect(await charges(em)).toHaveLength(8);

    const dir = path.join(ws.dir, 'hand-off');
    const exported = await cli('export', ws.jobPath, dir, '--approved');
    expect(exported.code, said(exported)).toBe(0);
    const handed = manifestRows<ManifestLine>(path.join(dir, 'manifest.jsonl'));
    expect(handed.map((r) => r.item)).toEqual([approved.item]);
    expect(handed[0]?.review).toBe('approved');
    expect(readFileSync(path.join(dir, handed[0]?.file ?? ''))).toEqual(
      readFileSync(path.join(out, approved.file)),
    );
    const files = readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) =>
      e.isFile(),
    );
    // The output's provenance sidecar travels with it; no other sidecar does.
    const name = path.basename(approved.file);
    expect(files.map((e) => e.name).sort()).toEqual(
      ['manifest.csv', 'manifest.jsonl', name, `${name}.json`].sort(),
    );
    expect(readFileSync(path.join(dir, `${handed[0]?.file}.json`))).toEqual(
      readFileSync(path.join(out, `${approved.file}.json`)),
    );
    // Never overwrites: a second export into the same folder refuses.
    const twice = await cli('export', ws.jobPath, dir, '--approved');
    expect(twice.code).toBe(2);
  }, 120_000);
});

describe('reject two files with the CLI', () => {
  it('plan --json quotes exactly their cost and run makes exactly them', async () => {
    const { em, cli, ws, rows } = await photosAndClipsRan('review-two', [
      'beach',
      'rooftop',
      'park',
    ]);
    // Two clips: nothing is made from them, so their remake is all there is to do.
    const clips = rows.filter((r) => r.step === 'clips');
    const [one, two] = clips;
    if (!one?.file || !two?.file) throw new Error('no clips');
    const reject = await cli('reject', ws.jobPath, one.file, two.file);
    expect(reject.code, said(reject)).toBe(0);

    const plan = await cli('plan', ws.jobPath, '--json');
    expect(plan.code, said(plan)).toBe(0);
    const quoted = JSON.parse(plan.stdout) as { total: number; steps: { rejected: number }[] };
    expect(one.creditsCost).toBeGreaterThan(0);
    expect(quoted.total).toBe((one.creditsCost ?? 0) + (two.creditsCost ?? 0));
    expect(quoted.steps.map((s) => s.rejected)).toEqual([0, 2]);

    const again = await cli('run', ws.jobPath);
    expect(again.code, said(again)).toBe(0);
    const made = (await charges(em)).slice(6);
    expect(made.map((c) => c.amount)).toEqual([one.creditsCost, two.creditsCost]);
    const after = manifestRows<ManifestLine>(path.join(ws.dir, 'out', 'manifest.jsonl'));
    const remade = after.filter((r) => r.current && r.runId !== one.runId);
    expect(remade.map((r) => r.item).sort()).toEqual([one.item, two.item].sort());
    expect(made.flatMap((c) => c.generationIds ?? []).sort()).toEqual(
      remade.map((r) => r.generationId).sort(),
    );
  }, 120_000);
});
