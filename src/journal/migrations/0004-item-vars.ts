/**
 * Migration 4: an item's template values (`vars`, in job order), so the
 * manifest and the report rebuilt from the journal can show one column per
 * value and a readable title without the job file. Items of earlier journals
 * keep NULL until a run of their job records them again. Outputs get an index
 * by generation id: a `from:` output names the file it was made from by its
 * source generation, which may have been downloaded by an earlier run.
 */
export const migration0004 = {
  version: 4,
  name: 'item-vars',
  sql: `
ALTER TABLE items ADD COLUMN vars_json TEXT;
CREATE INDEX outputs_by_generation ON outputs(generation_id);
`,
} as const;
