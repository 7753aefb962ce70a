/**
 * Migration 3: a training's 202 names a training and the influencer it will
 * become, not generations. Until now they were stored in the generation-id and
 * task-id columns; they get their own columns, and the rows of earlier
 * journals are moved there (an attempt belongs to a training when its item's
 * kind is `training`). Keys, request bodies and hashes are untouched.
 */
export const migration0003 = {
  version: 3,
  name: 'attempt-training-ids',
  sql: `
ALTER TABLE attempts ADD COLUMN training_id TEXT;
ALTER TABLE attempts ADD COLUMN influencer_id TEXT;
UPDATE attempts
SET training_id = json_extract(generation_ids_json, '$[0]'),
    influencer_id = task_id,
    generation_ids_json = '[]',
    task_id = NULL
WHERE (run_id, item_key) IN (SELECT run_id, item_key FROM items WHERE kind = 'training');
`,
} as const;
