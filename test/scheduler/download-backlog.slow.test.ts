/**
 * Downloads that fall behind the creates (a slow file host: the emulator's
 * `outputDelayMs`) hold new items back instead of queueing outputs without
 * end: `ibatch run` as a user runs it never has more outputs waiting for
 * their download than the backlog bound plus the items it had already
 * started, and every item is still charged once and downloaded once; a run
 * killed while its downloads lag resumes them without paying again.
 */
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import type { ManifestRow } from '../../src/outputs/index.js';
import { downloadBacklogBound, itemWindowBound } from '../../src/scheduler/item-window.js';
import { RUN_DEFAULTS } from '../../src/scheduler/types.js';
import {
  jsonLogs,
  manifestRows,
  runCliCaptured,
  said,
  spawnCli,
  testEmulator,
  until,
} from '../helpers/index.js';
import { charges, envFor, expectOneChargePerItem, imageJob, workspace } from './helpers.js';

const SCALE = 600;
/** Generations the scaled limits allow per window of their bucket. */
const GENERATIONS = SERVICE_RATE_LIMITS.generations.count;
/** The item window of those limits and the CLI's create queue. */
const WINDOW = itemWindowBound(GENERATIONS, RUN_DEFAULTS.createConcurrency);
const BOUND = downloadBacklogBound(WINDOW);
/**
 * Enough items, and files slow enough (four downloads at a time, each a
 * quarter second), that unbounded the outputs waiting would pass the bound
 * and what was started beside it by far.
 */
const N = 400;
const SLOW_FILES_MS = 250;
/** The runs last as long as their slow downloads: about N / 4 quarter seconds. */
const TIMEOUT_MS = 180_000;

/** Each item's one output downloaded, to a file of its own, and the files on disk. */
function expectEachDownloadedOnce(dir: string): void {
  const out = path.join(dir, 'out');
  const rows = manifestRows<ManifestRow>(path.join(out, 'manifest.jsonl')).filter(
    (row) => row.status === 'succeeded' && row.file !== undefined,
  );
  expect(rows).toHaveLength(N);
  expect(new Set(rows.map((row) => row.item)).size).toBe(N);
  expect(new Set(rows.map((row) => row.file)).size).toBe(N);
  const files = readdirSync(path.join(out, 'shots')).filter((name) => name.endsWith('.png'));
  expect(files).toHaveLength(N);
}

/** An emulator whose files are slow, and a job of `N` items named `name`. */
async function slowFiles(name: string) {
  const em = await testEmulator({ timeScale: SCALE, behaviour: { outputDelayMs: SLOW_FILES_MS } });
  return { em, ws: workspace(imageJob({ name, n: N })) };
}

describe('a run whose downloads fall behind', () => {
  it(
    'holds new items back: the outputs waiting stay bounded, each item charged and downloaded once',
    async () => {
      const { em, ws } = await slowFiles('slow-files');
      const env = { ...envFor(em, SCALE), IBATCH_LOG_LEVEL: 'debug' };
      const result = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(result.code, said(result)).toBe(0);
      const logs = jsonLogs(result.stderr);
      // The downloads did fall behind (the run said so), so the bound was met.
      expect(logs.some((line) => line.event === 'downloads.behind')).toBe(true);
      const backlog = logs.find((line) => line.event === 'downloads.backlog') as
        | { peak: number; bound: number }
        | undefined;
      expect(backlog?.bound).toBe(BOUND);
      expect(backlog?.peak).toBeGreaterThanOrEqual(BOUND);
      // Past the bound only the outputs of items already started when it held:
      // those in the window, and those created and not finished (at this pace
      // a generation finishes within a window of the generations bucket).
      expect(backlog?.peak).toBeLessThanOrEqual(BOUND + WINDOW + GENERATIONS);
      expectOneChargePerItem(await charges(em), N);
      expectEachDownloadedOnce(ws.dir);
    },
    TIMEOUT_MS,
  );

  it(
    'killed while its downloads lag, resumes them and pays nothing twice',
    async () => {
      const { em, ws } = await slowFiles('slow-files-killed');
      const env = envFor(em, SCALE);
      const run = spawnCli(['run', ws.jobPath], { env, cwd: ws.dir });
      await until(() => run.stderr().includes('"event":"downloads.behind"'), {
        timeoutMs: 60_000,
        what: 'the downloads to fall behind',
      });
      run.child.kill('SIGKILL');
      await run.exited;
      const paid = (await charges(em)).length;
      expect(paid).toBeLessThan(N);
      await em.admin.setBehaviour({ outputDelayMs: 0 });
      const resumed = await runCliCaptured(['run', 'job.yaml'], env, ws.dir);
      expect(resumed.code, said(resumed)).toBe(0);
      expectOneChargePerItem(await charges(em), N);
      expectEachDownloadedOnce(ws.dir);
    },
    TIMEOUT_MS,
  );
});
