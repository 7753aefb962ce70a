/**
 * The PostgreSQL journal store: the ops' statements (rewritten by
 * dialect.ts) on one synchronous connection (sync-client.ts). A transaction
 * is BEGIN ... COMMIT at READ COMMITTED: one runner per job (the job lock)
 * means no two writers touch one run's rows; what jobs share (assets,
 * influencers, deliveries) is written by upserts, atomic on their own. A
 * nested transaction is a savepoint, as in better-sqlite3.
 *
 * Round trips are most of a PostgreSQL journal's cost (each blocks the
 * engine's thread; docs/journal.md): what needs no answer waits for the next
 * statement (statement-queue.ts), each statement is prepared once per
 * connection under a name, and an iterated read comes a page at a time.
 */
import type { JournalStore, RunResult, Statement } from '../sql.js';
import {
  bindValues,
  type PostgresStatement,
  toPostgres,
  typedStatement,
  typeSignature,
} from './dialect.js';
import { StatementQueue } from './statement-queue.js';
import { COUNTS_DEFERRED, countsOfItems } from './step-counts.js';
import type { SyncPostgres } from './sync-client.js';

/**
 * Statements prepared under a name per connection, at most. An assumption:
 * far above what the ops send (63 distinct texts in a 1,000-item run,
 * counted: docs/benchmarks.md); past it a text goes unnamed (parsed each
 * time) rather than held by the server for the connection's life.
 */
const NAMED_STATEMENTS = 2000;

/** Rows per FETCH of a read that is iterated: this thread holds one page of it, the worker the next. */
const ROWS_PER_FETCH = 2000;

function statementOf(
  queue: StatementQueue,
  nameOf: () => string | undefined,
  cursorName: () => string,
  sql: PostgresStatement,
  pluck: boolean,
): Statement {
  const typed = new Map<string, ReturnType<typeof typedStatement> & { name?: string }>();
  const bound = (args: unknown[]) => {
    const values = bindValues(sql, args);
    const signature = typeSignature(values);
    let statement = typed.get(signature);
    if (statement === undefined) {
      const name = nameOf();
      statement = { ...typedStatement(sql, values), ...(name === undefined ? {} : { name }) };
      typed.set(signature, statement);
    }
    return { statement, params: statement.keep.map((i) => values[i]) };
  };
  // SQLite has no booleans: a condition selected as a value (`EXISTS (...) AS open`) is 1 or 0.
  const query = (args: unknown[]) => {
    const { statement, params } = bound(args);
    return queue.send(statement.text, params, {
      booleansAsNumbers: true,
      ...(statement.name === undefined ? {} : { name: statement.name }),
    });
  };
  const value = (row: Record<string, unknown>) => (pluck ? Object.values(row)[0] : row);
  const rows = (args: unknown[]) => query(args).rows.map(value);
  /**
   * A read of many rows (a run's 100,000 items) a page at a time, so
   * neither the worker nor this thread holds it whole. WITH HOLD: the
   * cursor outlives the transaction it was declared in (or the implicit
   * one of its own), so the caller may commit writes between pages.
   */
  function* paged(args: unknown[]): Generator<unknown> {
    const { statement, params } = bound(args);
    const cursor = cursorName();
    const fetch = `FETCH FORWARD ${ROWS_PER_FETCH} FROM ${cursor}`;
    const options = { booleansAsNumbers: true };
    queue.send(`DECLARE ${cursor} NO SCROLL CURSOR WITH HOLD FOR ${statement.text}`, params);
    let ahead = false;
    try {
      let page = queue.send(fetch, [], options).rows;
      for (;;) {
        // The next page is read while this one is used: the server's time
        // and this thread's overlap instead of adding up.
        ahead = page.length === ROWS_PER_FETCH;
        if (ahead) queue.ahead(cursor, fetch);
        for (const row of page) yield value(row);
        if (!ahead) return;
        ahead = false;
        page = queue.take(cursor, fetch, options).rows;
      }
    } finally {
      if (ahead) queue.drop(cursor);
      try {
        queue.send(`CLOSE ${cursor}`);
      } catch {
        // The connection is gone, and its cursors with it.
      }
    }
  }
  return {
    run(...args): RunResult {
      const result = query(args);
      const id = sql.returnsId ? Number(result.rows[0]?.id ?? 0) : 0;
      return { changes: result.rowCount, lastInsertRowid: id };
    },
    runLater(...args) {
      const { statement, params } = bound(args);
      queue.later({ sql: statement.text, params, name: statement.name });
    },
    get: (...args) => rows(args)[0],
    all: (...args) => rows(args),
    allSoon(...args) {
      // Writes waiting to go would go after it: read now, after them.
      if (queue.waiting) {
        const now = rows(args);
        return { take: () => now, drop: () => {} };
      }
      const { statement, params } = bound(args);
      const key = cursorName();
      queue.ahead(key, statement.text, params);
      let pending = true;
      return {
        take() {
          if (!pending) throw new Error(`the read ${key} was taken or dropped already`);
          pending = false;
          return queue.take(key, statement.text, { booleansAsNumbers: true }).rows.map(value);
        },
        drop() {
          if (pending) queue.drop(key);
          pending = false;
        },
      };
    },
    iterate: (...args) => paged(args),
    pluck: () => statementOf(queue, nameOf, cursorName, sql, true),
  };
}

export function postgresStore(client: SyncPostgres, now: () => number = Date.now): JournalStore {
  const cache = new Map<string, Statement>();
  let named = 0;
  let changes = 0;
  let cursors = 0;
  const cursorName = () => `ib_rows_${++cursors}`;
  const nameOf = () => (named < NAMED_STATEMENTS ? `ib_${++named}` : undefined);
  const queue = new StatementQueue(client);
  const send = (sql: string, params?: readonly unknown[]) => queue.send(sql, params);
  /** `fn` with the count trigger set aside, in the current transaction. */
  const countsDeferred = <T>(fn: () => T): T => {
    // SET LOCAL: this transaction's alone, gone at its end whatever happens.
    send(`SET LOCAL ${COUNTS_DEFERRED} = 'on'`);
    const value = fn();
    send(`SET LOCAL ${COUNTS_DEFERRED} = 'off'`);
    return value;
  };
  return {
    now,
    stmt(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = statementOf(queue, nameOf, cursorName, toPostgres(sql), false);
        cache.set(sql, statement);
      }
      return statement;
    },
    transaction: (fn) => queue.within('BEGIN', fn),
    itemsInBulk(runIds, fn) {
      const value = countsDeferred(fn);
      const ofRuns = 'WHERE run_id IN (SELECT json_array_elements_text($1::json))';
      for (const sql of countsOfItems(ofRuns)) send(sql, [JSON.stringify(runIds)]);
      return value;
    },
    keyedItemsInBulk(runId, fn) {
      const keys = countsDeferred(fn);
      if (keys.length === 0) return;
      const ofKeys =
        'WHERE run_id = $1 AND item_key IN (SELECT json_array_elements_text($2::json))';
      for (const sql of countsOfItems(ofKeys, true)) send(sql, [runId, JSON.stringify(keys)]);
    },
    snapshot: (fn) => queue.within('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    // PostgreSQL keeps no count of other connections' commits: every look is
    // a change, so a long-lived reader rebuilds what it shows each time.
    changeCount: () => ++changes,
    integrityCheck: () => {
      send('SELECT count(*) FROM runs');
      return ['ok'];
    },
    close: () => client.close(),
  };
}
