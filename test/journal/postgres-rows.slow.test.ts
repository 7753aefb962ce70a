/**
 * The rows of the PostgreSQL store's connection (src/journal/postgres/
 * sync-client.ts) cross from its worker as JSON text: every value a
 * journal column holds arrives as node-postgres gave it, a value JSON
 * would change is refused as a statement error (never taken for a lost
 * connection), the store gives a condition selected as a value as 1
 * or 0, as SQLite does, and each row's fields are named as its columns.
 */
import { expect, it } from 'vitest';
import { PostgresStatementError, SyncPostgres } from '../../src/journal/postgres/sync-client.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';

const server = postgresForFile();

function connect(): SyncPostgres {
  const client = new SyncPostgres({ connectionString: server.url() });
  return client;
}

describePostgres('postgres rows', () => {
  it('arrive as node-postgres gives them: text, integers past 2^31, floats, booleans, nulls, void', () => {
    const client = connect();
    try {
      const text = 'café ☕ \u2028 "quoted" \\ back\nline \u0000'.replace('\u0000', '');
      const { rows, rowCount } = client.query(
        `SELECT $1::text AS t, 1795743285221::bigint AS ms, 2.5::float8 AS credits,
           12.345678::numeric AS n, (1 = 1) AS yes, NULL::text AS nothing,
           pg_advisory_unlock_all() AS done
         FROM generate_series(1, 3)`,
        [text],
      );
      expect(rowCount).toBe(3);
      expect(rows).toHaveLength(3);
      expect(rows[0]).toEqual({
        t: text,
        ms: 1795743285221,
        credits: 2.5,
        n: 12.345678,
        yes: true,
        nothing: null,
        done: '',
      });
      // A statement that answers no rows, and a script of several.
      expect(client.query('CREATE TEMP TABLE t (v text)').rows).toEqual([]);
      expect(client.query("INSERT INTO t VALUES ('a'); SELECT v FROM t").rows).toEqual([
        { v: 'a' },
      ]);
      // As the store reads them: a boolean is 1 or 0.
      expect(
        client.query('SELECT true AS a, false AS b', [], { booleansAsNumbers: true }).rows,
      ).toEqual([{ a: 1, b: 0 }]);
    } finally {
      client.close();
    }
  });

  it('any column name is a field name as written, quotes and braces too; of two of one name the last wins', () => {
    const client = connect();
    try {
      const { rows } = client.query(
        `SELECT 1 AS "a b", 2 AS "it's", 3 AS "x""y", 4 AS "}; v[0] = 1; {", 5 AS "__x",
           6 AS same, 7 AS same, (1 = 0) AS off
         FROM generate_series(1, 2)`,
        [],
        { booleansAsNumbers: true },
      );
      expect(rows).toEqual(
        [0, 1].map(() => ({
          'a b': 1,
          "it's": 2,
          'x"y': 3,
          '}; v[0] = 1; {': 4,
          __x: 5,
          same: 7,
          off: 0,
        })),
      );
      expect(Object.getPrototypeOf(rows[0])).toBe(Object.prototype);
    } finally {
      client.close();
    }
  });

  it('a value JSON would change is refused as a statement error, and the connection goes on', () => {
    const client = connect();
    try {
      for (const sql of [
        "SELECT 'NaN'::float8 AS credits",
        "SELECT 'Infinity'::float8 AS credits",
        'SELECT now() AS at',
        "SELECT '\\x00ff'::bytea AS raw",
        'SELECT \'{"a":1}\'::jsonb AS doc',
      ]) {
        const error = (() => {
          try {
            client.query(sql);
          } catch (e) {
            return e;
          }
          return undefined;
        })();
        expect(error, sql).toBeInstanceOf(PostgresStatementError);
        expect(String((error as Error).message), sql).toMatch(/JSON cannot carry/);
      }
      expect(client.query('SELECT 1 AS one').rows).toEqual([{ one: 1 }]);
    } finally {
      client.close();
    }
  });
});
