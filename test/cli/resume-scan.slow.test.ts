/**
 * A resume reads the job file once before its first create, and says what
 * its run ended before the kill. The items it drives first and those whose
 * outputs a kill left to download are kept whole by the check's scan
 * (run-job.ts `readUnfinishedRun`), not found by scanning the job again (a
 * second pass over a 100,000-row job before the first create). Full
 * `ibatch run` processes against the emulator; the run kills itself once an
 * item's outcome is committed and its downloads are not queued yet (crash
 * point `after-outcome`). Spawned processes need `npm run build`.
 */
import { expect, it } from 'vitest';
import { OUTPUT_STATE, openJournal } from '../../src/journal/index.js';
import { spawnCli, testEmulator } from '../helpers/index.js';
import {
  charges,
  envFor,
  expectOneChargePerItem,
  imageJob,
  workspace,
} from '../scheduler/helpers.js';

const SCALE = 30;
const N = 8;

it('a resume after a kill with outputs left to download scans the job file no second time and names what its run ended', async () => {
  const em = await testEmulator({ timeScale: SCALE });
  const ws = workspace(imageJob({ name: 'resume-scan', n: N }));
  const env = { ...envFor(em, SCALE), IBATCH_LOG_FORMAT: 'json', IBATCH_LOG_LEVEL: 'debug' };
  const killed = await spawnCli(['run', ws.jobPath], {
    env: { ...env, IBATCH_CRASH_AT: 'after-outcome:3' },
    cwd: ws.dir,
  }).exited;
  expect(killed.signal, killed.stderr).toBe('SIGKILL');
  // What the resume then has to do: outputs to download and items to drive.
  let endedBefore = 0;
  const journal = await openJournal(ws.journalPath, { readonly: true });
  try {
    const run = journal.findUnfinishedRun('resume-scan');
    if (!run) throw new Error('the killed run is not unfinished');
    expect(journal.listOutputs(run.runId, OUTPUT_STATE.pending).length).toBeGreaterThan(0);
    const unended = journal.firstUnendedItemKeys(run.runId, N).length;
    expect(unended).toBeGreaterThan(0);
    endedBefore = N - unended;
  } finally {
    journal.close();
  }

  const resumed = await spawnCli(['run', ws.jobPath], { env, cwd: ws.dir }).exited;
  expect(resumed.code, resumed.stderr).toBe(0);
  const logs = resumed.stderr
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level?: number; msg?: string });
  // Debug lines are there to be read (pino's level 20): the scan's line would be one.
  expect(logs.some((log) => log.level === 20)).toBe(true);
  expect(logs.filter((log) => log.msg?.includes('scanning the job file again'))).toEqual([]);
  // It says what its run ended before the kill, not only what earlier runs did.
  expect(logs.find((log) => log.msg?.startsWith('resumed run'))?.msg).toContain(
    `: ${N} generation item(s) (${endedBefore} ended before this start),`,
  );
  expectOneChargePerItem(await charges(em), N);
});
