/**
 * The PostgreSQL journal store: the ops' statements (rewritten by
 * dialect.ts) on one synchronous connection (sync-client.ts). A transaction
 * is BEGIN ... COMMIT at READ COMMITTED: one runner per job (the job lock)
 * means no two writers touch one run's rows; what jobs share (assets,
 * influencers, deliveries) is written by upserts, atomic on their own. A
 * nested transaction is a savepoint, as in better-sqlite3.
 */
import type { JournalStore, RunResult, Statement } from '../sql.js';
import {
  bindValues,
  type PostgresStatement,
  toPostgres,
  typedStatement,
  typeSignature,
} from './dialect.js';
import { COUNTS_DEFERRED, countsOfItems } from './schema.js';
import type { SyncPostgres } from './sync-client.js';

function statementOf(client: SyncPostgres, sql: PostgresStatement, pluck: boolean): Statement {
  const typed = new Map<string, ReturnType<typeof typedStatement>>();
  const query = (args: unknown[]) => {
    const values = bindValues(sql, args);
    const signature = typeSignature(values);
    let statement = typed.get(signature);
    if (statement === undefined) {
      statement = typedStatement(sql, values);
      typed.set(signature, statement);
    }
    // SQLite has no booleans: a condition selected as a value (`EXISTS (...) AS open`) is 1 or 0.
    return client.query(
      statement.text,
      statement.keep.map((i) => values[i]),
      { booleansAsNumbers: true },
    );
  };
  const rows = (args: unknown[]) => {
    const result = query(args).rows;
    return pluck ? result.map((row) => Object.values(row)[0]) : result;
  };
  return {
    run(...args): RunResult {
      const result = query(args);
      const id = sql.returnsId ? Number(result.rows[0]?.id ?? 0) : 0;
      return { changes: result.rowCount, lastInsertRowid: id };
    },
    get: (...args) => rows(args)[0],
    all: (...args) => rows(args),
    // The rows come whole: one round trip, not a cursor's many.
    iterate: (...args) => rows(args),
    pluck: () => statementOf(client, sql, true),
  };
}

export function postgresStore(client: SyncPostgres, now: () => number = Date.now): JournalStore {
  const cache = new Map<string, Statement>();
  let depth = 0;
  let changes = 0;
  const within = <T>(begin: string, fn: () => T): T => {
    const savepoint = depth > 0 ? `ib_${depth}` : undefined;
    client.query(savepoint ? `SAVEPOINT ${savepoint}` : begin);
    depth += 1;
    try {
      const value = fn();
      client.query(savepoint ? `RELEASE SAVEPOINT ${savepoint}` : 'COMMIT');
      return value;
    } catch (error) {
      try {
        client.query(savepoint ? `ROLLBACK TO SAVEPOINT ${savepoint}` : 'ROLLBACK');
      } catch {
        // The connection is gone: PostgreSQL rolls the transaction back itself.
      }
      throw error;
    } finally {
      depth -= 1;
    }
  };
  return {
    now,
    stmt(sql) {
      let statement = cache.get(sql);
      if (!statement) {
        statement = statementOf(client, toPostgres(sql), false);
        cache.set(sql, statement);
      }
      return statement;
    },
    transaction: (fn) => within('BEGIN', fn),
    itemsInBulk(runIds, fn) {
      // SET LOCAL: this transaction's alone, gone at its end whatever happens.
      client.query(`SET LOCAL ${COUNTS_DEFERRED} = 'on'`);
      const value = fn();
      client.query(`SET LOCAL ${COUNTS_DEFERRED} = 'off'`);
      const ofRuns = 'WHERE run_id IN (SELECT json_array_elements_text($1::json))';
      for (const sql of countsOfItems(ofRuns)) client.query(sql, [JSON.stringify(runIds)]);
      return value;
    },
    snapshot: (fn) => within('BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY', fn),
    // PostgreSQL keeps no count of other connections' commits: every look is
    // a change, so a long-lived reader rebuilds what it shows each time.
    changeCount: () => ++changes,
    integrityCheck: () => {
      client.query('SELECT count(*) FROM runs');
      return ['ok'];
    },
    close: () => client.close(),
  };
}
