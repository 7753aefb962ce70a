/**
 * The handle every journal operation receives, the same for both stores:
 * prepared statements keyed by their SQL text (each op keeps its SQL inline
 * and still prepares it once per connection), transactions, and the clock.
 * The ops' SQL is SQLite's; the PostgreSQL store (postgres/) rewrites it to
 * one meaning there (postgres/dialect.ts).
 */
import type Database from 'better-sqlite3';
import { canonicalScope, canonicalServiceUrl } from '../shared/index.js';

/** What a write statement reports. */
export interface RunResult {
  readonly changes: number;
  /** The `id` of the row an INSERT into `events` or `reviews` made. */
  readonly lastInsertRowid: number | bigint;
}

/**
 * The part of better-sqlite3's statement the ops use: parameters are
 * positional (`?`, as arguments) or named (`@name`, one object).
 */
export interface Statement {
  run(...params: unknown[]): RunResult;
  /**
   * `run` for a write whose outcome nobody reads, inside a transaction: a
   * store may send it with the transaction's next statement (PostgreSQL:
   * one round trip fewer), where its failure fails that statement and the
   * transaction. SQLite runs it at once.
   */
  runLater(...params: unknown[]): void;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
  /**
   * `all`, sent now where the store can send a read before its answer is
   * needed (PostgreSQL: the server and the worker make it while this thread
   * goes on); SQLite reads at `take()`. Only for a read that what is queued
   * before it cannot change: inside a snapshot, or outside a transaction.
   */
  allSoon(...params: unknown[]): SoonRows;
  iterate(...params: unknown[]): Iterable<unknown>;
  /** The same statement answering each row's first column only. */
  pluck(): Statement;
}

/** The answer of a read sent with `allSoon`: taken once, or dropped when no longer wanted. */
export interface Soon<T> {
  take(): T;
  drop(): void;
}
export type SoonRows = Soon<unknown[]>;

/** `rows` as records, each parsed by `schema` (a zod schema), when taken. */
export function soonRecords<T>(rows: SoonRows, schema: { parse(row: unknown): T }): Soon<T[]> {
  return { take: () => rows.take().map((row) => schema.parse(row)), drop: () => rows.drop() };
}

export interface JournalDb {
  /** The prepared statement for `sql`, prepared on first use. */
  stmt(sql: string): Statement;
  /**
   * Runs `fn` in one transaction that takes the write lock at its start (a
   * nested call is a savepoint of the outer one); commits when `fn` returns.
   */
  transaction<T>(fn: () => T): T;
  /** The current time in ms since the epoch (injectable for tests). */
  now(): number;
  /**
   * Runs `fn`, which inserts the items of the new runs `runIds`, inside
   * the current transaction, leaving their per-step counts to be made once
   * after it, where the store's per-item upkeep would cost more with each
   * item (PostgreSQL's, postgres/store.ts). Without it `fn` just runs.
   */
  itemsInBulk?<T>(runIds: readonly string[], fn: () => T): T;
  /**
   * The same for items added to run `runId`, which may have some already:
   * `fn` returns the keys of the items it inserted, and they are added to
   * the counts once. On PostgreSQL, counting each of a batch of thousands
   * of items in one transaction left a version of its step's count rows per
   * item that no one could reclaim until the transaction ended: megabytes
   * per row, kept by the table for good (docs/benchmarks.md).
   */
  keyedItemsInBulk?(runId: string, fn: () => readonly string[]): void;
}

/** What a `Journal` needs of its store beyond the ops' handle. */
export interface JournalStore extends JournalDb {
  /** Runs `fn` as one read: every read inside sees one state of the journal. */
  snapshot<T>(fn: () => T): T;
  /** Changes whenever another connection has committed since this one last looked. */
  changeCount(): number;
  /** `['ok']` when the store finds itself healthy. */
  integrityCheck(): string[];
  close(): void;
}

export function sqliteStore(db: Database.Database, now: () => number = Date.now): JournalStore {
  registerServiceFunctions(db);
  const cache = new Map<string, Database.Statement>();
  return {
    now,
    stmt(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        const prepared = db.prepare(sql);
        statement = Object.assign(prepared, {
          runLater: (...params: unknown[]) => {
            prepared.run(...params);
          },
          allSoon: (...params: unknown[]) => ({
            take: () => prepared.all(...params),
            drop: () => {},
          }),
        });
        cache.set(sql, statement);
      }
      return statement as unknown as Statement;
    },
    transaction: (fn) => db.transaction(fn).immediate(),
    snapshot: (fn) => db.transaction(fn).deferred(),
    changeCount: () => Number(db.pragma('data_version', { simple: true })),
    integrityCheck: () =>
      (db.pragma('integrity_check') as { integrity_check: string }[]).map(
        (row) => row.integrity_check,
      ),
    close: () => db.close(),
  };
}

/**
 * SQL functions over the one definition of a service's identity
 * (src/shared/service-url.ts): `ib_service(url)` and `ib_scope(scope)`.
 * Journals written before it store the base URL as it was given, so reads
 * compare canonical spellings (migration 10 also rewrites the stored ones).
 * Registered on every connection before it migrates or reads.
 */
export function registerServiceFunctions(db: Database.Database): void {
  const text = (f: (s: string) => string) => (value: unknown) =>
    typeof value === 'string' ? f(value) : value;
  db.function('ib_service', { deterministic: true }, text(canonicalServiceUrl));
  db.function('ib_scope', { deterministic: true }, text(canonicalScope));
}

/**
 * The service a run spent on, canonical (`alias` names the runs row; '' for
 * runs older than the field), as SQL over its `options_json`: budget, resume
 * and "done" are per service, whatever spelling of it each run was given.
 * `serviceOfRun` (records.ts) reads it from a run record. Compare it with
 * `ib_service(?)` so a caller's spelling does not matter either.
 */
export const runServiceSql = (alias: string): string =>
  `ib_service(COALESCE(json_extract(${alias}.options_json, '$.service'), ''))`;
