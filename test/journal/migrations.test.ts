import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import {
  JournalVersionError,
  LATEST_SCHEMA_VERSION,
  openJournal,
} from '../../src/journal/index.js';
import { MIGRATIONS } from '../../src/journal/migrations/index.js';
import { tempDir } from '../helpers/index.js';

function indexNames(path: string): string[] {
  const db = new Database(path, { readonly: true });
  try {
    return (
      db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'index' AND name NOT LIKE 'sqlite_%'")
        .pluck()
        .all() as string[]
    ).sort();
  } finally {
    db.close();
  }
}

/** A journal at schema `version` (migrations 1..version) holding `rows` (SQL). */
function journalAt(version: number, rows: string): string {
  const path = join(tempDir(), 'journal.db');
  const old = new Database(path);
  for (const m of MIGRATIONS.slice(0, version)) old.exec(m.sql);
  old.pragma(`user_version = ${version}`);
  old.exec(rows);
  old.close();
  return path;
}

describe('migrations', () => {
  it('numbers migrations 1..N with no gap', () => {
    expect(MIGRATIONS.map((m) => m.version)).toEqual(MIGRATIONS.map((_, i) => i + 1));
  });

  it('creates a fresh journal at the latest version with WAL, FULL sync and foreign keys', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const journal = await openJournal(path);
    journal.close();
    const db = new Database(path);
    expect(db.pragma('user_version', { simple: true })).toBe(LATEST_SCHEMA_VERSION);
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  });

  it('migrates a version-1 journal and keeps its data', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const old = new Database(path);
    old.exec(MIGRATIONS[0]!.sql);
    old.pragma('user_version = 1');
    old
      .prepare(
        "INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at) VALUES ('r1', 'old', '/o', 'h', 'interrupted', 1, 1)",
      )
      .run();
    old.close();
    expect(indexNames(path)).toEqual([]);

    await expect(openJournal(path, { readonly: true })).rejects.toBeInstanceOf(JournalVersionError);
    const journal = await openJournal(path);
    expect(journal.findUnfinishedRun('old')?.runId).toBe('r1');
    journal.close();
    // Migration 2's lookup indexes arrive; its by-state ones are gone again (migration 9).
    expect(indexNames(path)).toContain('runs_by_job');
    expect(indexNames(path)).not.toContain('items_by_state');
  });

  it("moves a version-2 training attempt's ids out of the generation columns", async () => {
    const path = journalAt(
      2,
      `
      INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at)
        VALUES ('r1', 'old', '/o', 'h', 'interrupted', 1, 1);
      INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, created_at, updated_at)
        VALUES ('r1', 'train-mia', 'influencers', 'training', '{}', 'h1', 1, 1),
               ('r1', 'shot', 'shots', 'image', '{}', 'h2', 1, 1);
      INSERT INTO attempts (run_id, item_key, attempt_no, idempotency_key, request_json, request_hash,
          state, generation_ids_json, task_id, created_at)
        VALUES ('r1', 'train-mia', 1, 'k-train', '{"name":"Mia"}', 'h1', 'submitted', '["tr_1"]', 'inf_1', 1),
               ('r1', 'shot', 1, 'k-shot', '{}', 'h2', 'submitted', '["g1","g2"]', 'task_1', 1);
    `,
    );

    const journal = await openJournal(path);
    try {
      expect(journal.getAttempt('r1', 'train-mia', 1)).toMatchObject({
        idempotencyKey: 'k-train',
        request: { name: 'Mia' },
        requestHash: 'h1',
        generationIds: [],
        taskId: null,
        trainingId: 'tr_1',
        influencerId: 'inf_1',
      });
      expect(journal.getAttempt('r1', 'shot', 1)).toMatchObject({
        idempotencyKey: 'k-shot',
        generationIds: ['g1', 'g2'],
        taskId: 'task_1',
        trainingId: null,
        influencerId: null,
      });
    } finally {
      journal.close();
    }
  });

  it("stores a version-7 attempt's request once when it is its item's, and reads it back whole", async () => {
    const path = journalAt(
      7,
      `
      INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at)
        VALUES ('r1', 'old', '/o', 'h', 'interrupted', 1, 1);
      INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, created_at, updated_at)
        VALUES ('r1', 'same', 's', 'image', '{"input":{"prompt":"a"}}', 'h-a', 1, 1),
               ('r1', 'other', 's', 'image', '{"input":{"prompt":"b"}}', 'h-b', 1, 1);
      INSERT INTO attempts (run_id, item_key, attempt_no, idempotency_key, request_json, request_hash,
          state, created_at)
        VALUES ('r1', 'same', 1, 'k-same', '{"input":{"prompt":"a"}}', 'h-a', 'intent', 1),
               ('r1', 'other', 1, 'k-other', '{"input":{"prompt":"sent"}}', 'h-sent', 'failed', 1);
    `,
    );

    const journal = await openJournal(path);
    try {
      expect(journal.getAttempt('r1', 'same', 1)).toMatchObject({
        idempotencyKey: 'k-same',
        request: { input: { prompt: 'a' } },
        requestHash: 'h-a',
      });
      expect(journal.getAttempt('r1', 'other', 1)).toMatchObject({
        request: { input: { prompt: 'sent' } },
        requestHash: 'h-sent',
      });
    } finally {
      journal.close();
    }
    const raw = new Database(path, { readonly: true });
    try {
      expect(
        raw
          .prepare(
            `SELECT i.item_key, a.request_json, a.request_hash
             FROM attempts a JOIN items i ON i.rowid = a.item_row ORDER BY i.item_key`,
          )
          .all(),
      ).toEqual([
        { item_key: 'other', request_json: '{"input":{"prompt":"sent"}}', request_hash: 'h-sent' },
        { item_key: 'same', request_json: '', request_hash: '' },
      ]);
    } finally {
      raw.close();
    }
  });

  it('reads a version-8 journal read-only as it is (migration 9 only dropped indexes); a version-7 one waits for `run`', async () => {
    const rows = `
      INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at)
        VALUES ('r1', 'old', '/o', 'h', 'completed', 1, 1);`;
    const v8 = journalAt(8, rows);
    const reader = await openJournal(v8, { readonly: true });
    expect(reader.getRun('r1')?.status).toBe('completed');
    reader.close();
    expect(indexNames(v8)).toContain('items_by_state'); // untouched: a reader never migrates
    await expect(openJournal(journalAt(7, rows), { readonly: true })).rejects.toThrow(
      /run `ibatch run` once to upgrade it/,
    );
    const newer = journalAt(8, rows);
    const raw = new Database(newer);
    raw.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    raw.close();
    await expect(openJournal(newer, { readonly: true })).rejects.toThrow(/newer than this ibatch/);
  });

  it('refuses a journal from a newer ibatch', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const db = new Database(path);
    db.pragma(`user_version = ${LATEST_SCHEMA_VERSION + 1}`);
    db.close();
    await expect(openJournal(path)).rejects.toThrow(/newer than this ibatch/);
    // The failed open released its lock.
    await expect(openJournal(path)).rejects.toBeInstanceOf(JournalVersionError);
  });
  it('version 9 -> 10: stored spellings of one service become one, read as one before and after', async () => {
    const old = 'http://127.0.0.1:8080/api/v1/';
    const path = journalAt(
      9,
      `
      INSERT INTO runs (run_id, job_name, job_path, job_hash, status, budget, options_json, created_at, updated_at)
        VALUES ('r1', 'j', '/j', 'h', 'interrupted', 30,
          '{"service":"${old}","scope":"${old}#fp01","outputDir":"/o"}', 1, 1);
      INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, charged_credits,
          created_at, updated_at)
        VALUES ('r1', 'a', 's', 'image', '{}', 'h1', 4, 1, 1);
      INSERT INTO influencers (scope, job_name, local_id, config_hash, status, credits_cost, created_at, updated_at)
        VALUES ('${old}#fp01', 'j', 'mia', 'c1', 'succeeded', 50, 1, 1);
      INSERT INTO assets (scope, sha256, mime_type, size, asset_url, uploaded_at)
        VALUES ('${old}#fp01', 'd1', 'image/png', 1, 'http://127.0.0.1:8080/assets/d1', 1);
    `,
    );
    const spelling = 'http://LOCALHOST:8080/api/v1';
    const canonical = 'http://localhost:8080/api/v1';
    const read = (journal: Awaited<ReturnType<typeof openJournal>>) => ({
      net: journal.budgetStanding({ name: 'j', budget: 30 }, spelling).net,
      latest: [...journal.latestItems('j', spelling).keys()],
      influencer: journal.findInfluencer({
        scope: `${spelling}#fp01`,
        jobName: 'j',
        localId: 'mia',
        configHash: 'c1',
      })?.status,
      training: journal.lastTrainingCharge(`${canonical}#fp01`),
      assets: journal.assetUrlsOfService(spelling),
    });
    const expected = {
      net: 4,
      latest: ['a'],
      influencer: 'succeeded',
      training: 50,
      assets: ['http://127.0.0.1:8080/assets/d1'],
    };
    // A reader of version 9 (no migration): the same answers.
    const reader = await openJournal(path, { readonly: true });
    try {
      expect(read(reader)).toEqual(expected);
    } finally {
      reader.close();
    }
    const journal = await openJournal(path);
    try {
      expect(read(journal)).toEqual(expected);
      expect(journal.getRun('r1')?.options).toMatchObject({
        service: canonical,
        scope: `${canonical}#fp01`,
      });
      expect(journal.findAsset(`${canonical}#fp01`, 'd1')?.assetUrl).toBe(
        'http://127.0.0.1:8080/assets/d1',
      );
    } finally {
      journal.close();
    }
  });

  it('migration 11: counts and spend per step read alike before (read-only) and after, and follow every change', async () => {
    const path = journalAt(
      9,
      `INSERT INTO runs (run_id, job_name, job_path, job_hash, status, created_at, updated_at)
         VALUES ('r1', 'j', '/j', 'h', 'interrupted', 1, 1), ('r2', 'j', '/j', 'h', 'completed', 1, 1);
       INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, state,
           reserved_credits, charged_credits, refunded_credits, created_at, updated_at)
         VALUES ('r1', 'a', 'shots', 'image', '{}', 'h', 'succeeded', 0, 0.1, 0, 1, 1),
                ('r1', 'b', 'shots', 'image', '{}', 'h', 'pending', 0.2, 0, 0, 1, 1),
                ('r1', 'c', 'clips', 'video', '{}', 'h', 'failed', 0, 3, 3, 1, 1),
                ('r2', 'a', 'shots', 'image', '{}', 'h', 'succeeded', 0, 7, 0, 1, 1);`,
    );
    const before = {
      progress: [
        { stepId: 'shots', total: 2, states: { pending: 1, succeeded: 1 } },
        { stepId: 'clips', total: 1, states: { failed: 1 } },
      ],
      spend: { reserved: 0.2, charged: 3.1, refunded: 3, net: 0.1, committed: 0.3 },
    };
    const net = (spend: { net: number; committed: number }) => ({
      ...spend,
      net: Math.round(spend.net * 1e6) / 1e6,
      committed: Math.round(spend.committed * 1e6) / 1e6,
    });
    const reader = await openJournal(path, { readonly: true });
    expect(reader.progressByStep('r1')).toEqual(before.progress);
    expect(net(reader.spendSummary('r1'))).toEqual(before.spend);
    reader.close();
    const journal = await openJournal(path);
    try {
      expect(journal.progressByStep('r1')).toEqual(before.progress);
      expect(net(journal.spendSummary('r1'))).toEqual(before.spend);
      expect(journal.spendSummary('r2').charged).toBe(7);
      const raw = new Database(path);
      raw.exec(`
        UPDATE items SET state = 'succeeded', reserved_credits = 0, charged_credits = 0.2
          WHERE run_id = 'r1' AND item_key = 'b';
        DELETE FROM items WHERE run_id = 'r1' AND item_key = 'c';
        INSERT INTO items (run_id, item_key, step_id, kind, request_json, request_hash, created_at, updated_at)
          VALUES ('r1', 'd', 'late', 'image', '{}', 'h', 1, 1);`);
      raw.close();
      expect(journal.progressByStep('r1')).toEqual([
        { stepId: 'shots', total: 2, states: { succeeded: 2 } },
        { stepId: 'late', total: 1, states: { pending: 1 } },
      ]);
      expect(journal.spendByStep('r1').map((s) => [s.stepId, s.charged])).toEqual([
        ['shots', 0.3],
        ['late', 0],
      ]);
      expect(journal.spendSummary('r1')).toMatchObject({ reserved: 0, charged: 0.3, refunded: 0 });
    } finally {
      journal.close();
    }
  });
});
