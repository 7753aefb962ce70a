/**
 * Migration 9: drops the (run_id, state) indexes of items,
 * attempts and outputs. Every read that filters by state is a per-run read
 * made once at a run's start or end (a resume's open attempts and pending
 * downloads, a run's counts), which the primary key's run_id prefix serves as
 * well; per-item reads go through the primary key. The three indexes were
 * a large share of every item's journal footprint for no read that needed
 * them (figures: docs/benchmarks.md, "Figures behind choices in the code"). Readers of version 8 read the
 * journal as it is: a read-only open accepts it.
 */
export const migration0009 = {
  version: 9,
  name: 'drop-state-indexes',
  readsUnchanged: true,
  sql: `
DROP INDEX IF EXISTS items_by_state;
DROP INDEX IF EXISTS attempts_by_state;
DROP INDEX IF EXISTS outputs_by_state;
`,
} as const;
