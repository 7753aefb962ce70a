/**
 * Migration 1: every table of the journal. Migrations are append-only: never
 * edit a released one, add the next number instead. Credits are REAL because
 * the service reports `creditsCost` as a number; times are ms since the epoch.
 */
export const migration0001 = {
  version: 1,
  name: 'initial',
  sql: `
CREATE TABLE runs (
  run_id TEXT PRIMARY KEY,
  job_name TEXT NOT NULL,
  job_path TEXT NOT NULL,
  job_hash TEXT NOT NULL,
  status TEXT NOT NULL,
  budget REAL,
  options_json TEXT NOT NULL DEFAULT '{}',
  not_before INTEGER,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  finished_at INTEGER
) STRICT;

CREATE TABLE items (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  item_key TEXT NOT NULL,
  step_id TEXT NOT NULL,
  label TEXT NOT NULL DEFAULT '',
  model_id TEXT,
  kind TEXT NOT NULL,
  request_json TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL DEFAULT 'pending',
  attempts_used INTEGER NOT NULL DEFAULT 0,
  expected_outputs INTEGER NOT NULL DEFAULT 1,
  quoted_cost REAL,
  reserved_credits REAL NOT NULL DEFAULT 0 CHECK (reserved_credits >= 0),
  charged_credits REAL NOT NULL DEFAULT 0,
  refunded_credits REAL NOT NULL DEFAULT 0,
  error TEXT,
  not_before INTEGER,
  source_item_key TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, item_key)
) STRICT;

CREATE TABLE attempts (
  run_id TEXT NOT NULL,
  item_key TEXT NOT NULL,
  attempt_no INTEGER NOT NULL,
  idempotency_key TEXT NOT NULL UNIQUE,
  request_json TEXT NOT NULL,
  request_hash TEXT NOT NULL,
  state TEXT NOT NULL,
  generation_ids_json TEXT NOT NULL DEFAULT '[]',
  task_id TEXT,
  quoted_cost REAL,
  charged_cost REAL NOT NULL DEFAULT 0,
  refunded_credits REAL NOT NULL DEFAULT 0,
  http_status INTEGER,
  error TEXT,
  created_at INTEGER NOT NULL,
  submitted_at INTEGER,
  finished_at INTEGER,
  PRIMARY KEY (run_id, item_key, attempt_no),
  FOREIGN KEY (run_id, item_key) REFERENCES items(run_id, item_key) ON DELETE CASCADE
) STRICT;

CREATE TABLE outputs (
  run_id TEXT NOT NULL,
  item_key TEXT NOT NULL,
  n INTEGER NOT NULL,
  generation_id TEXT,
  url TEXT,
  kind TEXT NOT NULL,
  model_id TEXT,
  file TEXT,
  sha256 TEXT,
  bytes INTEGER,
  content_type TEXT,
  state TEXT NOT NULL DEFAULT 'pending',
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (run_id, item_key, n),
  FOREIGN KEY (run_id, item_key) REFERENCES items(run_id, item_key) ON DELETE CASCADE
) STRICT;

-- scope = service base URL + an account fingerprint chosen by the caller
-- (never the API key itself: the journal has no column that could hold it).
CREATE TABLE assets (
  scope TEXT NOT NULL,
  sha256 TEXT NOT NULL,
  mime_type TEXT NOT NULL,
  size INTEGER NOT NULL,
  asset_url TEXT NOT NULL,
  uploaded_at INTEGER NOT NULL,
  PRIMARY KEY (scope, sha256)
) STRICT;

CREATE TABLE influencers (
  scope TEXT NOT NULL,
  job_name TEXT NOT NULL,
  local_id TEXT NOT NULL,
  config_hash TEXT NOT NULL,
  run_id TEXT,
  training_id TEXT,
  influencer_id TEXT,
  lora_url TEXT,
  status TEXT NOT NULL,
  idempotency_key TEXT,
  attempt_no INTEGER NOT NULL DEFAULT 1,
  credits_cost REAL,
  refunded INTEGER NOT NULL DEFAULT 0,
  error TEXT,
  created_at INTEGER NOT NULL,
  updated_at INTEGER NOT NULL,
  PRIMARY KEY (scope, job_name, local_id, config_hash)
) STRICT;

CREATE TABLE events (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  at INTEGER NOT NULL,
  type TEXT NOT NULL,
  item_key TEXT,
  message TEXT NOT NULL,
  data_json TEXT NOT NULL DEFAULT '{}'
) STRICT;
`,
} as const;
