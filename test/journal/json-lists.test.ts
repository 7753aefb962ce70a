/**
 * A list the ops pass as a JSON array (`x IN (SELECT value FROM json_each(?))`,
 * a page's item keys, the states asked for) selects the same rows on both
 * stores, though PostgreSQL's statement says it as an array
 * (src/journal/postgres/dialect.ts): empty lists, NOT IN and a null in the list too.
 */
import { expect, it } from 'vitest';
import type { JournalStore } from '../../src/journal/sql.js';
import { onEachStore, seedRun, tempJournal } from './helpers.js';

const LISTS: readonly (readonly (string | null)[])[] = [
  ['run-a', 'run-c'],
  ['run-b'],
  [],
  ['run-a', null],
  ['nothing'],
];

onEachStore(() => {
  it('IN and NOT IN a JSON list give the same rows as a list of literals', async () => {
    const journal = await tempJournal();
    for (const runId of ['run-a', 'run-b', 'run-c']) seedRun(journal, null, runId);
    const { store } = journal as unknown as { store: JournalStore };
    const select = (where: string, ...params: unknown[]) =>
      store
        .stmt(`SELECT run_id FROM runs WHERE ${where} ORDER BY run_id`)
        .pluck()
        .all(...params);
    for (const list of LISTS) {
      const json = JSON.stringify(list);
      const literals = list.map((v) => (v === null ? 'NULL' : `'${v}'`)).join(', ');
      // An empty literal list is not SQL: nothing is in it, everything is not.
      const inLiterals = literals ? select(`run_id IN (${literals})`) : [];
      const notInLiterals = literals ? select(`run_id NOT IN (${literals})`) : select('1 = 1');
      expect({ list, rows: select('run_id IN (SELECT value FROM json_each(?))', json) }).toEqual({
        list,
        rows: inLiterals,
      });
      expect({
        list,
        rows: select('run_id NOT IN (SELECT value FROM json_each(?))', json),
      }).toEqual({ list, rows: notInLiterals });
    }
  });
});
