/**
 * The job file is the desired state (interface: "Re-running"), end to end with
 * the CLI against a real emulator, the ledger as the judge: a finished job run
 * again creates nothing; a CSV row added, changed or removed creates exactly
 * what it adds or changes; earlier files are never overwritten; items that
 * failed for good are made again, nothing else; `--fresh` and `--max-spend`.
 * On both stores: the SQLite journal beside the job (no `--journal`, as a
 * user starts) and a PostgreSQL journal (`--journal postgres://...`, a schema
 * of a real server per test). Spawned processes need `npm run build`.
 */
import { rmSync } from 'node:fs';
import path from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { runCliCaptured, said, spawnCli, testEmulator, until } from '../helpers/index.js';
import { onEachStore, tempJournalPath } from '../journal/helpers.js';
import {
  charges,
  expectOneChargePerItem,
  ledgerNet,
  slowEnv,
  type Workspace,
  workspace,
} from '../scheduler/helpers.js';
import {
  csvJob,
  expectFilesIntact,
  manifest,
  ROWS,
  run as runJob,
  SCALE,
  writeRows,
} from './csv-job.js';

/** This test's journal on the store being run: none (the default file) or a fresh schema. */
let journalArgs: string[] = [];
const run = (em: RunningEmulator, ws: Workspace, ...args: string[]) =>
  runJob(em, ws, ...journalArgs, ...args);

describe('re-running a job converges on the job file', () =>
  onEachStore((store) => {
    beforeEach(async () => {
      journalArgs = store === 'postgres' ? ['--journal', await tempJournalPath()] : [];
    });

    it('unchanged: 0 creates; a row added: only its item; changed: only it, old file kept; removed: 0 creates', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('converge'));
      writeRows(ws, ROWS);
      const first = await run(em, ws);
      expect(first.code, said(first)).toBe(0);
      expect(await charges(em)).toHaveLength(3);
      const firstRows = manifest(ws);

      const again = await run(em, ws);
      expect(again.code, said(again)).toBe(0);
      expect(again.stdout).toMatch(/nothing to do: 3 of 3 item\(s\) are done/);
      expect(await charges(em)).toHaveLength(3);

      writeRows(ws, [...ROWS, ['vase', 'shelf']]);
      const added = await run(em, ws);
      expect(added.code, said(added)).toBe(0);
      const afterAdd = await charges(em);
      expect(afterAdd).toHaveLength(4);
      expect(afterAdd.at(-1)?.idempotencyKey).toContain('vase');
      expectFilesIntact(ws, firstRows);

      writeRows(ws, [['mug', 'garden'], ...ROWS.slice(1), ['vase', 'shelf']]);
      const changed = await run(em, ws);
      expect(changed.code, said(changed)).toBe(0);
      const afterChange = await charges(em);
      expect(afterChange).toHaveLength(5);
      expect(afterChange.at(-1)?.idempotencyKey).toContain('mug');
      expectFilesIntact(ws, firstRows);
      const mugFiles = manifest(ws).filter(
        (r) => r.item.startsWith('garden-mug') || r.item.includes('mug'),
      );
      expect(new Set(mugFiles.map((r) => r.file)).size).toBe(mugFiles.length);

      // A file of a done item deleted by hand: the next run fetches it again, creating nothing.
      const lost = firstRows.find((r) => r.file && r.item.includes('scarf'));
      rmSync(path.join(ws.dir, 'out', lost?.file ?? 'missing'));
      const repaired = await run(em, ws);
      expect(repaired.code, said(repaired)).toBe(0);
      expect(repaired.stdout).toMatch(/1 missing or edited file\(s\) downloaded again/);
      expect(await charges(em)).toHaveLength(5);
      expectFilesIntact(
        ws,
        firstRows.filter((r) => !r.item.includes('mug')),
      );

      writeRows(ws, ROWS.slice(1));
      const removed = await run(em, ws);
      expect(removed.code, said(removed)).toBe(0);
      expect(await charges(em)).toHaveLength(5);
      expectFilesIntact(ws, manifest(ws));
    }, 90_000);

    it('nothing to do names the newest run on this service, not a newer run of another service', async () => {
      const here = await testEmulator({ timeScale: SCALE });
      const there = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('two-services'));
      writeRows(ws, ROWS);
      const first = await run(here, ws, '--run-id', 'here');
      expect(first.code, said(first)).toBe(0);
      const elsewhere = await run(there, ws, '--run-id', 'there');
      expect(elsewhere.code, said(elsewhere)).toBe(0);
      // The journal had no row on `there`: the folder's manifest was adopted as a run of it.
      expect(elsewhere.stdout).toMatch(/nothing to do/);

      const again = await run(here, ws);
      expect(again.code, said(again)).toBe(0);
      expect(again.stdout).toMatch(
        /nothing to do: 3 of 3 item\(s\) are done \(run here already finished\)/,
      );
      expect(await charges(here)).toHaveLength(3);
    });

    it('items that failed for good are made again by the next run, nothing else', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('retry-failed'));
      writeRows(ws, ROWS);
      expect((await run(em, ws)).code).toBe(0);
      // Two new rows whose every attempt fails (refunded): they fail for good.
      writeRows(ws, [...ROWS, ['vase', 'shelf'], ['pen', 'office']]);
      await em.admin.setFaults({ perEndpoint: { createGeneration: { 'generation-fail': 1 } } });
      const failing = await run(em, ws);
      expect(failing.code, said(failing)).toBe(1);
      const before = await charges(em);

      await em.admin.setFaults({});
      const second = await run(em, ws);
      expect(second.code, said(second)).toBe(0);
      const made = (await charges(em)).slice(before.length).map((c) => c.idempotencyKey ?? '');
      expect(made).toHaveLength(2);
      expect(made.some((key) => key.includes('vase'))).toBe(true);
      expect(made.some((key) => key.includes('pen'))).toBe(true);
      const third = await run(em, ws);
      expect(third.code, said(third)).toBe(0);
      expect(await charges(em)).toHaveLength(before.length + 2);
    }, 90_000);

    it('--fresh STEP makes the done items again with new keys and new files under the readable names', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('fresh'));
      writeRows(ws, ROWS);
      expect((await run(em, ws)).code).toBe(0);
      const firstRows = manifest(ws);
      const fresh = await run(em, ws, '--fresh', 'shots');
      expect(fresh.code, said(fresh)).toBe(0);
      expect(await charges(em)).toHaveLength(6);
      // The first run's bytes are intact, moved aside: the readable names are the new files'.
      const rows = manifest(ws);
      const older = rows.filter((r) =>
        firstRows.some((f) => f.runId === r.runId && f.item === r.item),
      );
      expect(older.map((r) => r.sha256).sort()).toEqual(firstRows.map((r) => r.sha256).sort());
      expectFilesIntact(ws, rows);
      const newer = rows.filter((r) => !older.includes(r));
      expect(newer.map((r) => r.file).sort()).toEqual(firstRows.map((r) => r.file).sort());
      const files = rows.flatMap((r) => (r.file ? [r.file] : []));
      expect(new Set(files).size).toBe(6);
      const typo = await run(em, ws, '--fresh', 'shot');
      expect(typo.code).toBe(2);
      expect(typo.stderr).toContain('"shot"');
      expect(await charges(em)).toHaveLength(6);
    }, 90_000);

    it('--max-spend stops at or under the cap (exit 3, no top-up advice); the next run continues', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('nightly-cap'));
      writeRows(ws, [...ROWS, ['vase', 'shelf'], ['pen', 'office']]);
      const capped = await run(em, ws, '--max-spend', '5');
      expect(capped.code, said(capped)).toBe(3);
      expect(capped.stdout).toMatch(/--max-spend reached/);
      expect(capped.stdout).not.toMatch(/top up/i);
      expect(await ledgerNet(em)).toBeLessThanOrEqual(5);
      const second = await run(em, ws, '--max-spend', '5');
      expect(second.code, said(second)).toBe(3);
      expect(await ledgerNet(em)).toBeLessThanOrEqual(10);
      const rest = await run(em, ws);
      expect(rest.code, said(rest)).toBe(0);
      expect(await charges(em)).toHaveLength(5);
    }, 90_000);

    it('budget caps the job over all its runs; a budget stop does not say top up', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('campaign-budget', 'budget: 7'));
      writeRows(ws, ROWS);
      expect((await run(em, ws)).code).toBe(0);
      writeRows(ws, [...ROWS, ['vase', 'shelf'], ['pen', 'office']]);
      const over = await run(em, ws);
      expect(over.code, said(over)).toBe(3);
      expect(over.stdout).toMatch(/budget reached/);
      expect(over.stdout).not.toMatch(/top up/i);
      expect(await ledgerNet(em)).toBeLessThanOrEqual(7);
    }, 90_000);

    it('`run` and `run --wait` started together: the waiter finds nothing left, each item is charged once', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('wait-converge'));
      const rows = Array.from({ length: 12 }, (_, i) => [`item${i + 1}`, 'studio'] as const);
      writeRows(ws, rows);
      const env = slowEnv(em, SCALE);
      const holder = spawnCli(['run', ws.jobPath, ...journalArgs], { env, cwd: ws.dir });
      // It creates only once it holds the job's lock (a file or PostgreSQL's advisory lock).
      await until(async () => (await charges(em)).length >= 1, {
        timeoutMs: 20_000,
        what: 'the first run to lock the job',
      });
      const waiter = await runCliCaptured(
        ['run', ws.jobPath, '--wait', ...journalArgs],
        env,
        ws.dir,
      );
      expect((await holder.exited).code, holder.stderr()).toBe(0);
      expect(waiter.code, said(waiter)).toBe(0);
      expect(waiter.stdout).toMatch(/nothing to do/);
      expectOneChargePerItem(await charges(em), rows.length);
    }, 90_000);

    it('--run-id X: more work makes run X.2; a stopped X.2 is resumed by the next --run-id X, never X.3', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('ci-family'));
      writeRows(ws, ROWS);
      expect((await run(em, ws, '--run-id', 'ci')).code).toBe(0);
      writeRows(ws, [...ROWS, ['vase', 'shelf'], ['pen', 'office'], ['cup', 'cafe']]);
      const capped = await run(em, ws, '--run-id', 'ci', '--max-spend', '2');
      expect(capped.code, said(capped)).toBe(3);
      expect(capped.stdout).toContain('run ci.2');
      const resumed = await run(em, ws, '--run-id', 'ci');
      expect(resumed.code, said(resumed)).toBe(0);
      expect(resumed.stdout).toContain('run ci.2');
      expectOneChargePerItem(await charges(em), 6);
    }, 90_000);

    it('--fresh after a stopped run finishes that run first: nothing it paid for is paid again', async () => {
      const em = await testEmulator({ timeScale: SCALE });
      const ws = workspace(csvJob('fresh-after-stop'));
      writeRows(ws, ROWS);
      expect((await run(em, ws)).code).toBe(0);
      writeRows(ws, [...ROWS, ['vase', 'shelf'], ['pen', 'office']]);
      expect((await run(em, ws, '--max-spend', '2')).code).toBe(3);
      expect(await charges(em)).toHaveLength(4);
      const fresh = await run(em, ws, '--fresh');
      expect(fresh.code, said(fresh)).toBe(0);
      // The stopped run's missing row (1) and the 3 earlier rows made fresh (3).
      const after = await charges(em);
      expect(after).toHaveLength(8);
      expect(new Set(after.map((c) => c.idempotencyKey)).size).toBe(8);
      expect(after.filter((c) => (c.idempotencyKey ?? '').includes('vase'))).toHaveLength(1);
    }, 90_000);
  }));
