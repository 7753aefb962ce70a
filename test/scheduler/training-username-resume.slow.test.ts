/**
 * A run killed while its influencer's training create is in flight holds the
 * influencer's username on the service before its journal knows the
 * influencer's id. The resume must recognise that username as its own (not
 * refuse it as another influencer's, exit 2, for ever) whatever the journal's
 * training record says: here the records a journal written before the
 * intent and the record were one commit can hold (no record beside the open
 * attempt; an earlier attempt's influencer id beside the intent). Kills at
 * the training's crash points in a row are the crash test's
 * (crash.slow.test.ts). The emulator's ledger is the judge. Needs
 * `npm run build`.
 */
import path from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import type { RunningEmulator } from '../../src/emulator/index.js';
import { type CampaignFiles, writeCampaign } from '../chaos/campaign.js';
import { spawnCli, tempDir, testEmulator } from '../helpers/index.js';
import { charges, chargesPerItem, envFor } from './helpers.js';

const SCALE = 30;

async function campaign(label: string): Promise<CampaignFiles> {
  // Unique per case and process: the emulator's usernames are per account.
  const username = `ava_${label}_${process.pid}`;
  return writeCampaign(tempDir(label), { generations: 3, training: true, username });
}

function run(files: CampaignFiles, env: NodeJS.ProcessEnv, crashAt?: string) {
  return spawnCli(['run', files.jobPath, '--journal', files.journalPath], {
    env: { ...env, ...(crashAt ? { IBATCH_CRASH_AT: crashAt } : {}) },
    cwd: path.dirname(files.jobPath),
  });
}

async function killedAt(files: CampaignFiles, env: NodeJS.ProcessEnv, point: string) {
  const spawned = run(files, env, `${point}:1`);
  expect((await spawned.exited).signal, spawned.stderr()).toBe('SIGKILL');
}

/** Changes the journal's rows as a journal written by an earlier version can hold them. */
function editJournal(files: CampaignFiles, sql: string): void {
  const db = new Database(files.journalPath, { fileMustExist: true });
  try {
    expect(db.prepare(sql).run().changes).toBeGreaterThan(0);
  } finally {
    db.close();
  }
}

/** The resume exits 0 and every item, the training included, was charged once. */
async function resumesChargingOnce(em: RunningEmulator, files: CampaignFiles) {
  const resumed = run(files, envFor(em, SCALE));
  expect((await resumed.exited).code, resumed.stderr()).toBe(0);
  const perItem = chargesPerItem(await charges(em));
  expect(perItem.size).toBe(files.generationItems + files.trainings);
  expect([...perItem.entries()].filter(([, n]) => n !== 1)).toEqual([]);
}

describe('a kill while the training create is in flight: the resume keeps its own username', () => {
  it.each([
    ['no training record beside the open attempt', 'DELETE FROM influencers'],
    [
      "the intent still naming an earlier attempt's influencer",
      "UPDATE influencers SET influencer_id = '00000000-0000-4000-8000-000000000001'",
    ],
  ])(
    'a journal with %s: the resume finishes, training charged once',
    async (_case, sql) => {
      const em = await testEmulator({ timeScale: SCALE });
      const env = envFor(em, SCALE);
      const files = await campaign(sql.startsWith('DELETE') ? 'norec' : 'stale');
      await killedAt(files, env, 'training-after-create-response');
      editJournal(files, sql);
      await resumesChargingOnce(em, files);
    },
    60_000,
  );
});
