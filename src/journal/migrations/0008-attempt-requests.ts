/**
 * Migration 8: an attempt whose request (or request hash) is its
 * item's stores '' instead of a second copy, and reads put the item's back
 * (ops/columns.ts). The copies of earlier journals are elided here too. The
 * version bump also keeps older releases, which would read '' as a request,
 * away from journals written this way.
 */
const sameAsItem = (column: string) => `UPDATE attempts SET ${column} = ''
WHERE ${column} <> '' AND ${column} = (SELECT i.${column} FROM items i
  WHERE i.run_id = attempts.run_id AND i.item_key = attempts.item_key);`;

export const migration0008 = {
  version: 8,
  name: 'attempt-requests',
  sql: `
${sameAsItem('request_json')}
${sameAsItem('request_hash')}
`,
} as const;
