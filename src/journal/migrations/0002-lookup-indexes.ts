/**
 * Migration 2: indexes for the reads a resume and `ibatch status` make
 * (items/outputs by state, a job's runs by age, a run's timeline). The by-state
 * indexes are dropped again by migration 9.
 */
export const migration0002 = {
  version: 2,
  name: 'lookup-indexes',
  sql: `
CREATE INDEX items_by_state ON items(run_id, state);
CREATE INDEX attempts_by_state ON attempts(run_id, state);
CREATE INDEX outputs_by_state ON outputs(run_id, state);
CREATE INDEX runs_by_job ON runs(job_name, created_at);
CREATE INDEX events_by_run ON events(run_id, id);
`,
} as const;
