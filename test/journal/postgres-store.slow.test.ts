/**
 * What the PostgreSQL store sends, and when (src/journal/postgres/
 * statement-queue.ts, store.ts): a write queued with `runLater` goes with
 * the next statement and its failure fails the transaction, undoing all of
 * it; a transaction that ran nothing sends nothing; a savepoint's failure
 * undoes only the savepoint; an iterated read comes through a cursor a page
 * at a time, the next page read ahead, and survives commits between pages.
 * On a real server.
 */
import { expect, it } from 'vitest';
import { postgresStore } from '../../src/journal/postgres/store.js';
import { PostgresStatementError, SyncPostgres } from '../../src/journal/postgres/sync-client.js';
import { describePostgres, postgresForFile } from '../helpers/postgres.js';

const server = postgresForFile();

/** A store on its own table, and every round trip its connection made (the statement and those sent before it). */
function storeOnTable(table: string) {
  const client = new SyncPostgres({ connectionString: server.url() });
  const trips: string[][] = [];
  const query = client.query.bind(client);
  client.query = (sql, params, options) => {
    trips.push([...(options?.before ?? []).map((s) => s.sql), sql]);
    return query(sql, params, options);
  };
  // A statement sent ahead (a cursor's next page) is a round trip of its own.
  const ahead = client.ahead.bind(client);
  client.ahead = (key, sql, params) => {
    trips.push([sql]);
    ahead(key, sql, params);
  };
  client.query(`DROP TABLE IF EXISTS ${table}`);
  client.query(`CREATE TABLE ${table} (k text PRIMARY KEY, v integer NOT NULL)`);
  trips.length = 0;
  const store = postgresStore(client);
  const other = new SyncPostgres({ connectionString: server.url() });
  const seen = () =>
    other.query(`SELECT k, v FROM ${table} ORDER BY k`).rows as { k: string; v: number }[];
  return {
    store,
    trips,
    seen,
    close() {
      store.close();
      other.close();
    },
  };
}

/** Runs `test` on a store over a fresh table `table`, closing both connections after. */
function onTable(table: string, test: (t: ReturnType<typeof storeOnTable>) => void): void {
  const t = storeOnTable(table);
  try {
    test(t);
  } finally {
    t.close();
  }
}

describePostgres('postgres store: what is sent, and when', () => {
  it('a queued write goes with the next statement; COMMIT is its own round trip, and returns', () => {
    onTable('q_send', (t) => {
      const insert = t.store.stmt('INSERT INTO q_send (k, v) VALUES (?, ?)');
      t.store.transaction(() => {
        insert.runLater('a', 1);
        insert.runLater('b', 2);
        expect(t.trips).toEqual([]); // nothing sent yet, BEGIN included
        expect(t.store.stmt('SELECT count(*) AS n FROM q_send').get()).toEqual({ n: 2 });
      });
      expect(t.trips).toHaveLength(2);
      expect(t.trips[0]?.[0]).toBe('BEGIN');
      expect(t.trips[0]).toHaveLength(4); // BEGIN, two inserts, then the read
      expect(t.trips[1]).toEqual(['COMMIT']);
      expect(t.seen()).toEqual([
        { k: 'a', v: 1 },
        { k: 'b', v: 2 },
      ]);
      // Outside a transaction a queued write is sent at once.
      t.trips.length = 0;
      insert.runLater('c', 3);
      expect(t.trips).toHaveLength(1);
      expect(t.seen()).toHaveLength(3);
    });
  });

  it('a transaction, or a savepoint, that ran nothing sends nothing', () => {
    onTable('q_none', (t) => {
      expect(t.store.transaction(() => t.store.transaction(() => 7))).toBe(7);
      expect(t.trips).toEqual([]);
      expect(() =>
        t.store.transaction(() => {
          throw new Error('before any statement');
        }),
      ).toThrow('before any statement');
      expect(t.trips).toEqual([]);
    });
  });

  it('a queued write that fails fails its transaction, at the next statement or at COMMIT, and undoes all of it', () => {
    onTable('q_fail', (t) => {
      const insert = t.store.stmt('INSERT INTO q_fail (k, v) VALUES (?, ?)');
      insert.run('taken', 0);
      // Failing at the next statement: the error names the write, not the read.
      expect(() =>
        t.store.transaction(() => {
          insert.run('first', 1);
          insert.runLater('taken', 2);
          t.store.stmt('SELECT 1 AS one').get();
        }),
      ).toThrow(/duplicate key[\s\S]*INSERT INTO q_fail/);
      // Failing at COMMIT, the last statement of the transaction being queued.
      expect(() =>
        t.store.transaction(() => {
          insert.run('second', 1);
          insert.runLater('taken', 3);
        }),
      ).toThrow(PostgresStatementError);
      expect(t.seen()).toEqual([{ k: 'taken', v: 0 }]);
      // The connection was left out of any transaction: the next one commits.
      t.store.transaction(() => insert.runLater('after', 4));
      expect(t.seen().map((row) => row.k)).toEqual(['after', 'taken']);
    });
  });

  it("a savepoint's failure undoes the savepoint only; the transaction goes on and commits", () => {
    onTable('q_save', (t) => {
      const insert = t.store.stmt('INSERT INTO q_save (k, v) VALUES (?, ?)');
      insert.run('taken', 0);
      t.store.transaction(() => {
        insert.run('outer', 1);
        expect(() =>
          t.store.transaction(() => {
            insert.run('inner', 2);
            insert.runLater('taken', 3);
            t.store.stmt('SELECT 1 AS one').get();
          }),
        ).toThrow(/duplicate key/);
        insert.runLater('outer-after', 4);
      });
      expect(t.seen().map((row) => row.k)).toEqual(['outer', 'outer-after', 'taken']);
    });
  });

  it('an iterated read comes a page at a time, in order, across commits between pages, and a read left early closes its cursor', () => {
    onTable('q_iter', (t) => {
      const insert = t.store.stmt('INSERT INTO q_iter (k, v) VALUES (?, ?)');
      t.store.transaction(() => {
        for (let i = 0; i < 4500; i++) insert.runLater(`k${String(i).padStart(5, '0')}`, i);
      });
      const read = t.store.stmt('SELECT k, v FROM q_iter ORDER BY v');
      const cursors = t.store.stmt(
        "SELECT count(*) AS n FROM pg_cursors WHERE name LIKE 'ib_rows_%'",
      );
      t.trips.length = 0;
      const values: number[] = [];
      for (const row of read.iterate() as Iterable<{ v: number }>) {
        values.push(row.v);
        // A write committed between two pages: the cursor holds its rows.
        if (row.v === 2100) {
          expect(cursors.get()).toEqual({ n: 1 });
          t.store.transaction(() => insert.runLater('z-late', -1));
        }
      }
      expect(values).toEqual(Array.from({ length: 4500 }, (_, i) => i));
      const fetches = t.trips.filter((trip) => trip.at(-1)?.startsWith('FETCH')).length;
      expect(cursors.get()).toEqual({ n: 0 });
      expect(fetches).toBe(3); // 2,000 + 2,000 + 500
      for (const row of read.iterate() as Iterable<{ v: number }>) if (row.v > 10) break;
      expect(cursors.get()).toEqual({ n: 0 });
    });
  });

  it('the next page is read ahead while one is used: cursors nested or left early never cross answers', () => {
    onTable('q_ahead', (t) => {
      const insert = t.store.stmt('INSERT INTO q_ahead (k, v) VALUES (?, ?)');
      t.store.transaction(() => {
        for (let i = 0; i < 4100; i++) insert.runLater(`k${String(i).padStart(5, '0')}`, i);
      });
      const read = t.store.stmt('SELECT v FROM q_ahead WHERE v >= ? ORDER BY v').pluck();
      t.trips.length = 0;
      // Inside one page of the outer read, a whole inner read (its own pages
      // read ahead too), and a write between the outer read's pages.
      const outer: number[] = [];
      let inner: number[] = [];
      for (const v of read.iterate(0) as Iterable<number>) {
        outer.push(v);
        if (v === 1999) inner = [...(read.iterate(100) as Iterable<number>)];
        if (v === 2000) t.store.transaction(() => insert.run('late', -1));
      }
      expect(outer).toEqual(Array.from({ length: 4100 }, (_, i) => i));
      expect(inner).toEqual(Array.from({ length: 4000 }, (_, i) => i + 100));
      // Each read's second and third pages were sent ahead, before they were asked for.
      const fetches = t.trips.filter((trip) => trip.at(-1)?.startsWith('FETCH'));
      expect(fetches).toHaveLength(6);
      // A read left with its next page on the way: the next statement gets its own answer.
      for (const v of read.iterate(0) as Iterable<number>) if (v === 5) break;
      expect(t.store.stmt('SELECT count(*) AS n FROM q_ahead').get()).toEqual({ n: 4101 });
      expect([...(read.iterate(4099) as Iterable<number>)]).toEqual([4099]);
    });
  });

  it('a read sent soon is answered when taken, in any order; one dropped never answers another; with writes waiting it reads after them', () => {
    onTable('q_soon', (t) => {
      const insert = t.store.stmt('INSERT INTO q_soon (k, v) VALUES (?, ?)');
      t.store.transaction(() => {
        for (let i = 0; i < 10; i++) insert.runLater(`k${i}`, i);
      });
      const read = t.store.stmt('SELECT v FROM q_soon WHERE v >= ? ORDER BY v').pluck();
      t.trips.length = 0;
      const low = read.allSoon(8);
      const high = read.allSoon(9);
      // Both went out at once, before either was taken.
      expect(t.trips).toEqual([
        [expect.stringContaining('v >= $1')],
        [expect.stringContaining('v >= $1')],
      ]);
      expect(high.take()).toEqual([9]);
      expect(low.take()).toEqual([8, 9]);
      expect(() => low.take()).toThrow(/taken or dropped/);
      // A read dropped on its way: the statements after get their own answers.
      read.allSoon(0).drop();
      expect(t.store.stmt('SELECT count(*) AS n FROM q_soon').get()).toEqual({ n: 10 });
      expect(read.allSoon(7).take()).toEqual([7, 8, 9]);
      // A write waiting to go with the next statement: the read goes after it, and sees it.
      t.store.transaction(() => {
        insert.runLater('k10', 10);
        expect(read.allSoon(10).take()).toEqual([10]);
      });
    });
  });
});
