/**
 * Migration 6 is the delivery record's (issue 16.1, another branch). This
 * empty stand-in keeps the numbers without a gap on the tags/costs branch;
 * when the branches meet, the delivery migration replaces this file.
 */
export const migration0006 = {
  version: 6,
  name: 'reserved',
  sql: '',
} as const;
