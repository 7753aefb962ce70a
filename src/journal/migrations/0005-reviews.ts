/**
 * Migration 5: review decisions. An append-only log: each approve,
 * reject or clear of one output (`n`) or a whole item (`n` NULL) is a row;
 * the latest row for an output wins. A decision names the run that made the
 * output, so a later regeneration of the item starts unreviewed. `prompt` is
 * a prompt edited in review, for the item's next attempt.
 */
export const migration0005 = {
  version: 5,
  name: 'reviews',
  sql: `
CREATE TABLE reviews (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  job_name TEXT NOT NULL,
  run_id TEXT NOT NULL,
  item_key TEXT NOT NULL,
  n INTEGER,
  decision TEXT NOT NULL CHECK (decision IN ('approved', 'rejected', 'cleared')),
  reviewer TEXT NOT NULL,
  note TEXT,
  prompt TEXT,
  at INTEGER NOT NULL
) STRICT;
CREATE INDEX reviews_by_output ON reviews(run_id, item_key, n);
CREATE INDEX reviews_by_job ON reviews(job_name);
`,
} as const;
