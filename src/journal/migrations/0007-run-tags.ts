/**
 * Migration 7: a run's `tags:`, as a JSON object of name ->
 * text, so `ibatch costs --by tag:NAME` groups spend without the job file.
 * Runs of earlier journals get `{}`: their spend shows under "(none)".
 * (0006 is the delivery record's number.)
 */
export const migration0007 = {
  version: 7,
  name: 'run-tags',
  sql: `
ALTER TABLE runs ADD COLUMN tags_json TEXT NOT NULL DEFAULT '{}';
`,
} as const;
