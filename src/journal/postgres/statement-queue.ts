/**
 * What the PostgreSQL store sends, and when. Round trips are most of a
 * PostgreSQL journal's cost (each blocks the engine's thread;
 * docs/journal.md), so inside a transaction what needs no answer waits and
 * goes with the next statement that does: BEGIN, SAVEPOINT and RELEASE, and
 * the writes an op sends with `runLater`. A transaction or savepoint that
 * sent nothing ends without a word; COMMIT is never deferred: when a journal
 * method returns, its COMMIT has returned.
 */
import type { QueryOptions, QueryResult, SyncPostgres } from './sync-client.js';
import type { StatementText } from './worker.js';

interface Level {
  /** Whether its BEGIN or SAVEPOINT went out. */
  sent: boolean;
  /** Where its BEGIN or SAVEPOINT waits in the queue while not sent. */
  readonly at: number;
}

export class StatementQueue {
  readonly #client: SyncPostgres;
  readonly #pending: StatementText[] = [];
  /** The open transaction's levels, outermost first. */
  readonly #levels: Level[] = [];

  constructor(client: SyncPostgres) {
    this.#client = client;
  }

  /** Sends what waits, then `sql`, in one round trip, and returns `sql`'s answer. */
  send(sql: string, params: readonly unknown[] = [], options: QueryOptions = {}): QueryResult {
    const before = this.#pending.splice(0);
    for (const level of this.#levels) level.sent = true;
    return this.#client.query(sql, params, before.length === 0 ? options : { ...options, before });
  }

  /**
   * Sends `sql` now without waiting for its answer, ahead of what waits in
   * the queue (`SyncPostgres.ahead`): only for a statement whose answer
   * those cannot change (a FETCH from a cursor already declared), or when
   * nothing waits (`waiting`).
   */
  ahead(key: string, sql: string, params: readonly unknown[] = []): void {
    this.#client.ahead(key, sql, params);
  }

  /** Whether statements wait to go with the next one. */
  get waiting(): boolean {
    return this.#pending.length > 0;
  }

  /** The answer of what was sent `ahead` under `key`. */
  take(key: string, sql: string, options: Pick<QueryOptions, 'booleansAsNumbers'>): QueryResult {
    return this.#client.take(key, sql, options);
  }

  /** Forgets what was sent `ahead` under `key`. */
  drop(key: string): void {
    this.#client.drop(key);
  }

  /**
   * Inside a transaction, queues a statement whose answer nobody reads: it
   * goes with the next one, and its failure fails that one (and so the
   * transaction). Outside one, sends it now.
   */
  later(statement: StatementText): void {
    if (this.#levels.length === 0)
      this.send(statement.sql, statement.params, statementName(statement));
    else this.#pending.push(statement);
  }

  /** Runs `fn` in a transaction opened by `begin`, a savepoint when one is open already. */
  within<T>(begin: string, fn: () => T): T {
    const savepoint = this.#levels.length > 0 ? `ib_${this.#levels.length}` : undefined;
    const level: Level = { sent: false, at: this.#pending.length };
    this.#pending.push({ sql: savepoint ? `SAVEPOINT ${savepoint}` : begin });
    this.#levels.push(level);
    let value: T;
    try {
      value = fn();
    } catch (error) {
      this.#levels.pop();
      this.#abandon(level, savepoint);
      throw error;
    }
    this.#levels.pop();
    if (!level.sent && this.#pending.length === level.at + 1) {
      this.#pending.pop(); // it ran nothing: nothing to send
    } else if (savepoint) {
      this.#pending.push({ sql: `RELEASE SAVEPOINT ${savepoint}` });
    } else {
      try {
        this.send('COMMIT');
      } catch (error) {
        // A queued write failed before it, or the COMMIT did: nothing of it stays.
        this.#rollback();
        throw error;
      }
    }
    return value;
  }

  #abandon(level: Level, savepoint: string | undefined): void {
    if (!level.sent) {
      // Nothing of it reached the server: its queued statements are dropped.
      this.#pending.length = level.at;
      return;
    }
    // What waits belongs to this level (or levels inside it): undone anyway.
    this.#pending.length = 0;
    if (!savepoint) {
      this.#rollback();
      return;
    }
    try {
      this.send(`ROLLBACK TO SAVEPOINT ${savepoint}`);
    } catch {
      // The connection is gone: PostgreSQL rolls the transaction back itself.
    }
  }

  #rollback(): void {
    this.#pending.length = 0;
    try {
      this.#client.query('ROLLBACK');
    } catch {
      // The connection is gone: PostgreSQL rolls the transaction back itself.
    }
  }
}

const statementName = (statement: StatementText): QueryOptions =>
  statement.name === undefined ? {} : { name: statement.name };
