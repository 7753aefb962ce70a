import { copyFileSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { priceOf } from '../../src/emulator/index.js';
import { openJournal } from '../../src/journal/index.js';
import { sha256Hex } from '../../src/shared/index.js';
import { planCli, said, testEmulator } from '../helpers/index.js';
import { charges, envFor, ledgerNet, type Workspace, workspace } from '../scheduler/helpers.js';
import { csvJob, expectFilesIntact, manifest, ROWS, run, SCALE, writeRows } from './csv-job.js';

const manifestPath = (ws: Workspace) => path.join(ws.dir, 'out', 'manifest.jsonl');

/** What these tests read of `plan --json`. */
interface Quote {
  readonly total: number;
}

/** A saved copy of the journal put back in place of the one there (its WAL dropped). */
function restoreJournal(ws: Workspace, saved: string): void {
  rmSync(`${ws.journalPath}-wal`, { force: true });
  rmSync(`${ws.journalPath}-shm`, { force: true });
  copyFileSync(saved, ws.journalPath);
}

const ADOPTED = /adopted 3 item\(s\) from manifest\.jsonl \(the journal does not show them done\)/;

describe('a lost journal: the manifest of the output folder says what is done', () => {
  it('the .ibatch folder deleted: 0 creates; a row added: exactly that row; earlier files unchanged', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('lost'));
    writeRows(ws, ROWS);
    const first = await run(em, ws);
    expect(first.code, said(first)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    const firstRows = manifest(ws);

    rmSync(path.join(ws.dir, '.ibatch'), { recursive: true });
    // `plan` counts the manifest `run` adopts: nothing to pay.
    expect((await planCli<Quote>(ws.jobPath, envFor(em, SCALE))).doc?.total).toBe(0);
    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    expect(said(again)).toMatch(ADOPTED);
    expectFilesIntact(ws, firstRows);

    // What adoption recorded: one completed run, no charge, one event.
    const journal = await openJournal(ws.journalPath, { readonly: true });
    try {
      const [adopted] = journal.listRuns('lost');
      expect(adopted?.runId).toMatch(/^adopted-/);
      expect(adopted?.status).toBe('completed');
      expect(journal.spendSummary(adopted!.runId).charged).toBe(0);
      expect(journal.listEvents(adopted!.runId).map((e) => e.type)).toContain('run.adopted');
    } finally {
      journal.close();
    }

    writeRows(ws, [...ROWS, ['vase', 'shelf']]);
    const added = await run(em, ws);
    expect(added.code, said(added)).toBe(0);
    const made = await charges(em);
    expect(made).toHaveLength(4);
    expect(made.at(-1)?.idempotencyKey).toContain('vase');
    expectFilesIntact(ws, firstRows);
  }, 90_000);

  it('--run-id ci-1, journal deleted, --run-id ci-1 again with a new row: that row is charged once', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('lost-ci'));
    writeRows(ws, ROWS);
    expect((await run(em, ws, '--run-id', 'ci-1')).code).toBe(0);
    const firstRows = manifest(ws);
    rmSync(ws.journalPath);
    rmSync(`${ws.journalPath}.locks`, { recursive: true, force: true });

    writeRows(ws, [...ROWS, ['vase', 'shelf']]);
    // `plan` quotes what `run` adopts and makes: the new row alone.
    const spent = await ledgerNet(em);
    const quote = await planCli<Quote>(ws.jobPath, envFor(em, SCALE), '--run-id', 'ci-1');
    expect(quote.doc?.total).toBe(priceOf('sdxl-lite', { input: { prompt: 'x' } }).cost);
    const next = await run(em, ws, '--run-id', 'ci-1');
    expect(next.code, said(next)).toBe(0);
    expect((await ledgerNet(em)) - spent).toBe(quote.doc?.total);
    const made = await charges(em);
    expect(made).toHaveLength(4);
    expect(said(next)).toMatch(ADOPTED);
    // The missing row's key is still named by --run-id.
    expect(made.at(-1)?.idempotencyKey).toMatch(/-ci-1-shots-.*vase/);
    expectFilesIntact(ws, firstRows);
    const rerun = await run(em, ws, '--run-id', 'ci-1');
    expect(rerun.code, said(rerun)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
  }, 90_000);

  it('a file edited, one deleted, one outside the folder: only those are made again', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('lost-edited'));
    writeRows(ws, [...ROWS, ['vase', 'shelf']]);
    expect((await run(em, ws)).code).toBe(0);
    const rows = manifest(ws);
    const [edited, deleted, escaped, kept] = rows;
    writeFileSync(path.join(ws.dir, 'out', edited!.file!), 'not the picture any more');
    rmSync(path.join(ws.dir, 'out', deleted!.file!));
    // A row naming a file outside the output folder, with that file's real
    // sha256: only the path guard stands between it and adoption.
    const outside = readFileSync(path.join(ws.dir, 'products.csv'));
    const forged = {
      ...JSON.parse(readFileSync(manifestPath(ws), 'utf8').split('\n')[2]!),
      file: '../products.csv',
      sha256: sha256Hex(outside),
    };
    const lines = readFileSync(manifestPath(ws), 'utf8').split('\n');
    lines[2] = JSON.stringify(forged);
    writeFileSync(manifestPath(ws), `${lines.join('\n')}{"torn line\n`);
    rmSync(path.join(ws.dir, '.ibatch'), { recursive: true });

    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    const made = (await charges(em)).slice(4).map((c) => c.idempotencyKey ?? '');
    expect(made).toHaveLength(3);
    for (const row of [edited, deleted, escaped]) {
      expect(made.some((key) => key.includes(row!.item.slice(0, 20)))).toBe(true);
    }
    expect(said(again)).toMatch(/adopted 1 item\(s\) from manifest\.jsonl/);
    expect(said(again)).toMatch(/manifest\.jsonl line 5 is not a manifest row: skipped/);
    expectFilesIntact(ws, [kept!]);
  }, 90_000);

  it('the WAL deleted and the journal emptied after a finished run: nothing is paid again', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('lost-wal'));
    writeRows(ws, ROWS);
    expect((await run(em, ws)).code).toBe(0);
    rmSync(`${ws.journalPath}-wal`, { force: true });
    rmSync(`${ws.journalPath}-shm`, { force: true });
    truncateSync(ws.journalPath, 0);
    // `plan` reads the emptied journal as none, and quotes the adoption: nothing to pay.
    expect((await planCli<Quote>(ws.jobPath, envFor(em, SCALE))).doc?.total).toBe(0);
    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    expect(said(again)).toMatch(ADOPTED);

    // The 4 KB form: a WAL-mode database header at schema 0, no tables.
    rmSync(ws.journalPath);
    const bare = new Database(ws.journalPath);
    bare.pragma('journal_mode = WAL');
    bare.close();
    const third = await run(em, ws);
    expect(third.code, said(third)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    expect(said(third)).toMatch(ADOPTED);
  }, 90_000);

  it('a from: chain: the clips are adopted with the images they were made from', async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(
      csvJob('lost-chain').concat(
        [
          '  - id: clips',
          '    model: kling-i2v',
          '    from: shots',
          '    input:',
          '      prompt: "slow dolly in, {{ setting }}"',
          '      duration: 5',
          '',
        ].join('\n'),
      ),
    );
    writeRows(ws, ROWS.slice(0, 2));
    const first = await run(em, ws);
    expect(first.code, said(first)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
    rmSync(path.join(ws.dir, '.ibatch'), { recursive: true });
    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
    expect(said(again)).toMatch(/adopted 4 item\(s\)/);
    // Adopted clips stay done on the next run too (their source generation is recorded).
    const third = await run(em, ws);
    expect(third.code, said(third)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
  }, 90_000);
  it("last night's journal beside tonight's folder: what the manifest shows made since is adopted, not paid again", async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('stale'));
    writeRows(ws, ROWS.slice(0, 1));
    expect((await run(em, ws)).code).toBe(0);
    // Last night: the journal knows the first row only (a CI cache saved then).
    const stale = `${ws.journalPath}.last-night`;
    copyFileSync(ws.journalPath, stale);
    writeRows(ws, ROWS);
    expect((await run(em, ws)).code).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    const tonight = manifest(ws);

    // Tonight's journal lost, last night's restored beside tonight's folder.
    restoreJournal(ws, stale);
    // `plan` quotes what `run` then charges: nothing.
    expect((await planCli<Quote>(ws.jobPath, envFor(em, SCALE))).doc?.total).toBe(0);
    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    expect(said(again)).toMatch(
      /adopted 2 item\(s\) from manifest\.jsonl \(the journal does not show them done\)/,
    );
    expectFilesIntact(ws, tonight);
    // Adopted once: the next run finds every item done and adopts nothing.
    const third = await run(em, ws);
    expect(third.code, said(third)).toBe(0);
    expect(await charges(em)).toHaveLength(3);
    expect(said(third)).not.toMatch(/adopted \d+ item/);
  }, 90_000);

  it("a stopped run's never-attempted item that another journal made since: adopted, out of that run, not paid again", async () => {
    const em = await testEmulator({ timeScale: SCALE });
    const ws = workspace(csvJob('stale-stopped'));
    const price = priceOf('sdxl-lite', { input: { prompt: 'x' } }).cost;
    writeRows(ws, ROWS.slice(0, 2));
    expect((await run(em, ws)).code).toBe(0);
    // The third row's run stops at --max-spend before it sends anything for it.
    writeRows(ws, [...ROWS, ['vase', 'shelf']]);
    const stopped = await run(em, ws, '--max-spend', String(price));
    expect(stopped.code, said(stopped)).toBe(3);
    const saved = path.join(ws.dir, 'journal.stopped.db');
    copyFileSync(ws.journalPath, saved);
    // That journal lost: a run on a fresh one adopts the folder and makes the rest.
    rmSync(path.join(ws.dir, '.ibatch'), { recursive: true });
    expect((await run(em, ws)).code).toBe(0);
    const paid = await charges(em);
    expect(paid).toHaveLength(4);

    // The stopped run's journal restored: its never-sent item, made since, is adopted.
    restoreJournal(ws, saved);
    expect((await planCli<Quote>(ws.jobPath, envFor(em, SCALE))).doc?.total).toBe(0);
    const again = await run(em, ws);
    expect(again.code, said(again)).toBe(0);
    expect(await charges(em)).toHaveLength(4);
    expect(said(again)).toMatch(/adopted 1 item\(s\)/);
  }, 90_000);
});
