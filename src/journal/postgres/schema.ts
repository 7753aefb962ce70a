/**
 * The PostgreSQL journal's migrations. Versions are shared with SQLite's
 * (../migrations/): the same version is the same model. A PostgreSQL
 * journal starts at version 10 (the model SQLite reached through its first
 * ten migrations), in one migration; a later model is a migration in both
 * lists, under one number. Append-only, like SQLite's.
 *
 * Types: TEXT stays text, INTEGER (ms timestamps, counts) is bigint, REAL
 * (credits) is double precision. Every table the ops sort by insertion order
 * has a `seq` column for it (SQLite's `rowid`, dialect.ts). The functions
 * the ops call by SQLite's names are defined with SQLite's meaning where the
 * ops use them: `json_extract` (returns text: the ops only read strings
 * with it), `json_set` (top-level keys, text values), and `ib_service` /
 * `ib_scope`, src/shared/service-url.ts's rules in PL/pgSQL (a test holds
 * the two to the same answers). Each function keeps the schema it was
 * created in (`SET search_path FROM CURRENT`), so it finds the others
 * whoever calls it.
 */

import {
  ATTEMPT_ROW_COLUMNS,
  OUTPUT_ROW_COLUMNS,
  rowsByItemRow,
} from '../migrations/0015-item-rows.js';
import { ITEMS_IN_ORDER, RUN_STEP_COUNTS, STEP_COUNTS_BY_CHANGE } from './step-counts.js';

export interface PostgresMigration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

const FUNCTIONS = `
CREATE FUNCTION ib_json_path(path text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT
  SET search_path FROM CURRENT AS $f$
  SELECT COALESCE(array_agg(COALESCE(t.m[1], t.m[2], t.m[3]) ORDER BY t.ord), '{}')
  FROM regexp_matches(substr(path, 2), '\\.(?:"([^"]*)"|([^."\\[]+))|\\[(\\d+)\\]', 'g')
    WITH ORDINALITY AS t(m, ord)
$f$;

CREATE FUNCTION json_extract(doc text, path text) RETURNS text LANGUAGE sql IMMUTABLE STRICT
  SET search_path FROM CURRENT AS $f$
  SELECT (doc::jsonb) #>> ib_json_path(path)
$f$;

CREATE FUNCTION json_set(doc text, VARIADIC pairs text[]) RETURNS text LANGUAGE plpgsql IMMUTABLE
  SET search_path FROM CURRENT AS $f$
DECLARE
  result jsonb := COALESCE(doc, '{}')::jsonb;
BEGIN
  FOR i IN 1 .. COALESCE(array_length(pairs, 1), 0) BY 2 LOOP
    result := jsonb_set(result, ib_json_path(pairs[i]), COALESCE(to_jsonb(pairs[i + 1]), 'null'::jsonb), true);
  END LOOP;
  RETURN result::text;
END
$f$;

CREATE FUNCTION ib_service(url text) RETURNS text LANGUAGE plpgsql IMMUTABLE STRICT
  SET search_path FROM CURRENT AS $f$
DECLARE
  m text[];
  scheme text;
  host text;
  port text;
BEGIN
  m := regexp_match(url, '^([A-Za-z][A-Za-z0-9+.-]*)://(?:[^@/?#]*@)?(\\[[^\\]]*\\]|[^:/?#]*)(?::([0-9]*))?([^?#]*)');
  IF m IS NULL OR m[2] = '' THEN
    RETURN url;
  END IF;
  scheme := lower(m[1]);
  host := regexp_replace(lower(m[2]), '\\.+$', '');
  port := NULLIF(m[3], '');
  IF port IS NOT NULL THEN
    port := COALESCE(NULLIF(ltrim(port, '0'), ''), '0');
  END IF;
  IF (scheme = 'http' AND port = '80') OR (scheme = 'https' AND port = '443') THEN
    port := NULL;
  END IF;
  IF host = 'localhost' OR host LIKE '%.localhost' OR host ~ '^127\\.[0-9]+\\.[0-9]+\\.[0-9]+$'
     OR host IN ('[::1]', '[0:0:0:0:0:0:0:1]') THEN
    host := 'localhost';
  END IF;
  RETURN scheme || '://' || host || COALESCE(':' || port, '') || regexp_replace(m[4], '/+$', '');
END
$f$;

CREATE FUNCTION ib_scope(scope text) RETURNS text LANGUAGE sql IMMUTABLE STRICT
  SET search_path FROM CURRENT AS $f$
  SELECT CASE WHEN strpos(scope, '#') = 0 THEN scope
    ELSE ib_service(regexp_replace(scope, '#[^#]*$', '')) || substring(scope from '#[^#]*$') END
$f$;
`;

const TABLES = `
CREATE TABLE runs (
  seq bigserial NOT NULL,
  run_id text PRIMARY KEY,
  job_name text NOT NULL,
  job_path text NOT NULL,
  job_hash text NOT NULL,
  status text NOT NULL,
  budget double precision,
  options_json text NOT NULL DEFAULT '{}',
  not_before bigint,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  finished_at bigint,
  tags_json text NOT NULL DEFAULT '{}'
);
CREATE INDEX runs_by_job ON runs(job_name, created_at);

CREATE TABLE items (
  seq bigserial NOT NULL,
  run_id text NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  item_key text NOT NULL,
  step_id text NOT NULL,
  label text NOT NULL DEFAULT '',
  model_id text,
  kind text NOT NULL,
  request_json text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL DEFAULT 'pending',
  attempts_used bigint NOT NULL DEFAULT 0,
  expected_outputs bigint NOT NULL DEFAULT 1,
  quoted_cost double precision,
  reserved_credits double precision NOT NULL DEFAULT 0 CHECK (reserved_credits >= 0),
  charged_credits double precision NOT NULL DEFAULT 0,
  refunded_credits double precision NOT NULL DEFAULT 0,
  error text,
  not_before bigint,
  source_item_key text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  vars_json text,
  PRIMARY KEY (run_id, item_key)
);

CREATE TABLE attempts (
  seq bigserial NOT NULL,
  run_id text NOT NULL,
  item_key text NOT NULL,
  attempt_no bigint NOT NULL,
  idempotency_key text NOT NULL UNIQUE,
  request_json text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL,
  generation_ids_json text NOT NULL DEFAULT '[]',
  task_id text,
  quoted_cost double precision,
  charged_cost double precision NOT NULL DEFAULT 0,
  refunded_credits double precision NOT NULL DEFAULT 0,
  http_status bigint,
  error text,
  created_at bigint NOT NULL,
  submitted_at bigint,
  finished_at bigint,
  training_id text,
  influencer_id text,
  PRIMARY KEY (run_id, item_key, attempt_no),
  FOREIGN KEY (run_id, item_key) REFERENCES items(run_id, item_key) ON DELETE CASCADE
);

CREATE TABLE outputs (
  seq bigserial NOT NULL,
  run_id text NOT NULL,
  item_key text NOT NULL,
  n bigint NOT NULL,
  generation_id text,
  url text,
  kind text NOT NULL,
  model_id text,
  file text,
  sha256 text,
  bytes bigint,
  content_type text,
  state text NOT NULL DEFAULT 'pending',
  error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (run_id, item_key, n),
  FOREIGN KEY (run_id, item_key) REFERENCES items(run_id, item_key) ON DELETE CASCADE
);
CREATE INDEX outputs_by_generation ON outputs(generation_id);

CREATE TABLE assets (
  scope text NOT NULL,
  sha256 text NOT NULL,
  mime_type text NOT NULL,
  size bigint NOT NULL,
  asset_url text NOT NULL,
  uploaded_at bigint NOT NULL,
  PRIMARY KEY (scope, sha256)
);

CREATE TABLE influencers (
  scope text NOT NULL,
  job_name text NOT NULL,
  local_id text NOT NULL,
  config_hash text NOT NULL,
  run_id text,
  training_id text,
  influencer_id text,
  lora_url text,
  status text NOT NULL,
  idempotency_key text,
  attempt_no bigint NOT NULL DEFAULT 1,
  credits_cost double precision,
  refunded bigint NOT NULL DEFAULT 0,
  error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (scope, job_name, local_id, config_hash)
);

CREATE TABLE events (
  id bigserial PRIMARY KEY,
  run_id text NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  at bigint NOT NULL,
  type text NOT NULL,
  item_key text,
  message text NOT NULL,
  data_json text NOT NULL DEFAULT '{}'
);
CREATE INDEX events_by_run ON events(run_id, id);

CREATE TABLE reviews (
  id bigserial PRIMARY KEY,
  job_name text NOT NULL,
  run_id text NOT NULL,
  item_key text NOT NULL,
  n bigint,
  decision text NOT NULL CHECK (decision IN ('approved', 'rejected', 'cleared')),
  reviewer text NOT NULL,
  note text,
  prompt text,
  at bigint NOT NULL
);
CREATE INDEX reviews_by_output ON reviews(run_id, item_key, n);
CREATE INDEX reviews_by_job ON reviews(job_name);

CREATE TABLE deliveries (
  store text NOT NULL,
  bucket text NOT NULL,
  key text NOT NULL,
  sha256 text NOT NULL,
  bytes bigint NOT NULL,
  state text NOT NULL CHECK (state IN ('sending', 'delivered')),
  job_name text NOT NULL,
  at bigint NOT NULL,
  PRIMARY KEY (store, bucket, key)
);
`;

/**
 * Version 14 (SQLite's migration 14 is its number alone): attempts' keys
 * stay unique through the 16 bytes of each key's MD5 instead of the key
 * itself, about 130 characters that a btree held once more per attempt,
 * in pages that random keys leave partly empty: the journal's largest
 * index (figures: docs/benchmarks.md).
 * A collision of two keys' MD5 would refuse the second attempt's record,
 * never let two attempts share a key.
 */
const DIGEST_KEY_INDEXES = `
CREATE UNIQUE INDEX attempts_idempotency_digest ON attempts ((md5(idempotency_key)::uuid));
ALTER TABLE attempts DROP CONSTRAINT attempts_idempotency_key_key;
`;

/**
 * Version 15, SQLite's migration 15 (../migrations/0015-item-rows.ts):
 * attempts and outputs name their item by its row number (`items.seq`,
 * what the ops call `rowid`) instead of its run id and key. The two tables
 * are rebuilt rather than altered: a dropped column's bytes would stay in
 * every row written before.
 */
const ITEM_ROWS = `
ALTER TABLE items ADD CONSTRAINT items_row UNIQUE (seq);

CREATE TABLE attempts_v15 (
  seq bigserial NOT NULL,
  item_row bigint NOT NULL REFERENCES items(seq) ON DELETE CASCADE,
  attempt_no bigint NOT NULL,
  idempotency_key text NOT NULL,
  request_json text NOT NULL,
  request_hash text NOT NULL,
  state text NOT NULL,
  generation_ids_json text NOT NULL DEFAULT '[]',
  task_id text,
  quoted_cost double precision,
  charged_cost double precision NOT NULL DEFAULT 0,
  refunded_credits double precision NOT NULL DEFAULT 0,
  http_status bigint,
  error text,
  created_at bigint NOT NULL,
  submitted_at bigint,
  finished_at bigint,
  training_id text,
  influencer_id text,
  PRIMARY KEY (item_row, attempt_no)
);
${rowsByItemRow('attempts', ATTEMPT_ROW_COLUMNS, 'seq')}

CREATE TABLE outputs_v15 (
  seq bigserial NOT NULL,
  item_row bigint NOT NULL REFERENCES items(seq) ON DELETE CASCADE,
  n bigint NOT NULL,
  generation_id text,
  url text,
  kind text NOT NULL,
  model_id text,
  file text,
  sha256 text,
  bytes bigint,
  content_type text,
  state text NOT NULL DEFAULT 'pending',
  error text,
  created_at bigint NOT NULL,
  updated_at bigint NOT NULL,
  PRIMARY KEY (item_row, n)
);
${rowsByItemRow('outputs', OUTPUT_ROW_COLUMNS, 'seq')}

DROP TABLE attempts;
DROP TABLE outputs;
ALTER TABLE attempts_v15 RENAME TO attempts;
ALTER TABLE outputs_v15 RENAME TO outputs;
ALTER TABLE attempts RENAME CONSTRAINT attempts_v15_pkey TO attempts_pkey;
ALTER TABLE outputs RENAME CONSTRAINT outputs_v15_pkey TO outputs_pkey;
ALTER TABLE attempts RENAME CONSTRAINT attempts_v15_item_row_fkey TO attempts_item_row_fkey;
ALTER TABLE outputs RENAME CONSTRAINT outputs_v15_item_row_fkey TO outputs_item_row_fkey;
ALTER SEQUENCE attempts_v15_seq_seq RENAME TO attempts_seq_seq;
ALTER SEQUENCE outputs_v15_seq_seq RENAME TO outputs_seq_seq;
CREATE UNIQUE INDEX attempts_idempotency_digest ON attempts ((md5(idempotency_key)::uuid));
CREATE INDEX outputs_by_generation ON outputs(generation_id);
`;

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 10, name: 'initial (the model of SQLite version 10)', sql: FUNCTIONS + TABLES },
  { version: 11, name: 'run-step-counts', sql: RUN_STEP_COUNTS },
  { version: 12, name: 'items-in-order', sql: ITEMS_IN_ORDER },
  { version: 13, name: 'step-counts-by-change', sql: STEP_COUNTS_BY_CHANGE },
  { version: 14, name: 'digest-key-indexes', sql: DIGEST_KEY_INDEXES },
  { version: 15, name: 'item-rows', sql: ITEM_ROWS },
];
