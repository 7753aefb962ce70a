/**
 * The journal of one `scaleRun` side, SQLite file or PostgreSQL schema, as
 * the bench sees it from outside the CLI: the `--journal` arguments for the
 * CLI, items done (the per-state counts table, one row per step and state,
 * so a poll costs the same at 100,000 items as at 1,000), and the bytes the
 * journal takes.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { RunningPostgres } from '../test/helpers/postgres-launch.js';

export interface BenchJournal {
  /** `sqlite` or `postgres`. */
  readonly kind: string;
  /** What the CLI takes after `--journal` (a file path or a `postgres://` URL). */
  readonly location: string;
  /** Items in state `succeeded`, over every run; 0 while the journal does not exist yet. */
  done(): Promise<number>;
  /** Bytes the journal takes now (file + WAL, or tables + indexes + TOAST of its schema). */
  bytes(): Promise<number>;
  close(): Promise<void>;
}

const DONE_SQL =
  "SELECT coalesce(sum(items), 0) AS n FROM run_step_states WHERE state = 'succeeded'";

/**
 * The journal at `<dir>/.ibatch/journal.db` (the CLI's default), read-only
 * from here, opened for each poll and closed again: a connection held open
 * would keep the WAL file after the run (SQLite folds it in and removes it
 * when the last connection closes) and add it to the journal's bytes.
 */
export function sqliteJournal(dir: string): BenchJournal {
  const file = join(dir, '.ibatch', 'journal.db');
  return {
    kind: 'sqlite',
    location: file,
    async done() {
      let db: Database.Database | undefined;
      try {
        db = new Database(file, { readonly: true, fileMustExist: true });
        return (db.prepare(DONE_SQL).get() as { n: number }).n;
      } catch {
        return 0; // not created or not migrated yet, or busy: ask again
      } finally {
        db?.close();
      }
    },
    async bytes() {
      let bytes = 0;
      for (const suffix of ['', '-wal']) {
        try {
          bytes += statSync(file + suffix).size;
        } catch {
          // no WAL file: nothing to add
        }
      }
      return bytes;
    },
    async close() {},
  };
}

/** A fresh schema on `server`, reached over TCP with the superuser's password. */
export async function postgresJournal(server: RunningPostgres): Promise<BenchJournal> {
  const location = await server.newSchema();
  const schema = new URL(location).searchParams.get('schema') ?? 'public';
  const client = new pg.Client({ connectionString: server.url() });
  await client.connect();
  await client.query(`SET search_path TO ${schema}`);
  return {
    kind: 'postgres',
    location,
    async done() {
      try {
        return Number((await client.query<{ n: string }>(DONE_SQL)).rows[0]?.n ?? 0);
      } catch {
        return 0; // tables not created yet
      }
    },
    async bytes() {
      const rows = await client.query<{ bytes: string }>(
        `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0) AS bytes
           FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = $1 AND c.relkind = 'r'`,
        [schema],
      );
      return Number(rows.rows[0]?.bytes ?? 0);
    },
    async close() {
      await client.end();
    },
  };
}
