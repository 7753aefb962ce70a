/**
 * Migration 14: PostgreSQL's alone (postgres/schema.ts, version 14: the
 * unique index of attempts' idempotency keys holds each key's 16-byte MD5,
 * not its ~130 characters). SQLite keeps its indexes: its records are compact enough,
 * and changing a UNIQUE column's index there means rebuilding the table. Its
 * journal changes in nothing but its number, which keeps one version
 * meaning one model on both stores: the keys are unique on both.
 */
export const migration0014 = {
  version: 14,
  name: 'digest-key-indexes',
  readsUnchanged: true,
  sql: '',
} as const;
