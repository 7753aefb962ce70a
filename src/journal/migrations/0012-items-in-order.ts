/**
 * Migration 12: PostgreSQL's alone (postgres/step-counts.ts, version 12: an
 * index giving a run's items in insertion order, and a count trigger a bulk
 * load can set aside). SQLite's rowid already orders a run's items, and its
 * triggers cost a bulk load nothing, so its journal changes in nothing but
 * its number, which keeps one version meaning one model on both stores.
 */
export const migration0012 = {
  version: 12,
  name: 'items-in-order',
  readsUnchanged: true,
  sql: '',
} as const;
