/**
 * Migration 13: PostgreSQL's alone (postgres/step-counts.ts, version 13: the
 * count trigger moves only what an item's update changed). SQLite's
 * triggers (migration 11) already fire per change, so its journal changes
 * in nothing but its number, which keeps one version meaning one model on
 * both stores.
 */
export const migration0013 = {
  version: 13,
  name: 'step-counts-by-change',
  readsUnchanged: true,
  sql: '',
} as const;
