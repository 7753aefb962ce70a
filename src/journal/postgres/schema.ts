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
 * What the trigger of version 11 does for one item row (`ib_count_item`):
 * takes the row as it was from its step's counts and spend, and adds the
 * row as it is.
 */
const COUNT_ITEM_BODY = `  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE run_steps SET
        reserved_credits = round(reserved_credits - OLD.reserved_credits, 6),
        charged_credits = round(charged_credits - OLD.charged_credits, 6),
        refunded_credits = round(refunded_credits - OLD.refunded_credits, 6)
      WHERE run_id = OLD.run_id AND step_id = OLD.step_id;
    UPDATE run_step_states SET items = items - 1
      WHERE run_id = OLD.run_id AND step_id = OLD.step_id AND state = OLD.state;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    INSERT INTO run_steps (run_id, step_id, first_row) VALUES (NEW.run_id, NEW.step_id, NEW.seq)
      ON CONFLICT (run_id, step_id) DO NOTHING;
    UPDATE run_steps SET
        reserved_credits = round(reserved_credits + NEW.reserved_credits, 6),
        charged_credits = round(charged_credits + NEW.charged_credits, 6),
        refunded_credits = round(refunded_credits + NEW.refunded_credits, 6)
      WHERE run_id = NEW.run_id AND step_id = NEW.step_id;
    INSERT INTO run_step_states (run_id, step_id, state, items)
      VALUES (NEW.run_id, NEW.step_id, NEW.state, 1)
      ON CONFLICT (run_id, step_id, state) DO UPDATE SET items = run_step_states.items + 1;
  END IF;
  RETURN NULL;
END`;

/**
 * The per-step counts and spend of the items `where` selects, inserted:
 * version 11's backfill (every item), and what a bulk load of runs into
 * the journal adds once its items are in (store.ts `itemsInBulk`). Two
 * statements, each taking the parameters `where` names.
 */
export function countsOfItems(where: string): [string, string] {
  return [
    `INSERT INTO run_steps (run_id, step_id, first_row, reserved_credits, charged_credits, refunded_credits)
  SELECT run_id, step_id, MIN(seq), round(SUM(reserved_credits), 6),
    round(SUM(charged_credits), 6), round(SUM(refunded_credits), 6)
  FROM items ${where} GROUP BY run_id, step_id`,
    `INSERT INTO run_step_states (run_id, step_id, state, items)
  SELECT run_id, step_id, state, COUNT(*) FROM items ${where} GROUP BY run_id, step_id, state`,
  ];
}

/** The setting a bulk load turns on, for its own transaction, to leave the counts to `countsOfItems`. */
export const COUNTS_DEFERRED = 'ibatch.counts_deferred';

/**
 * Version 12: the items of a run in insertion order through an index (what
 * SQLite's rowid gives for nothing): a page of a run's items (a manifest
 * rebuild reads 100 pages of a 100,000-item run) was a scan of the whole
 * table each, its time growing with the journal. And the count trigger
 * stands aside while a bulk load (`ibatch journal copy`) inserts a run's
 * items, which then counts them once: each item's update of its step's one
 * row inside one long transaction leaves a version PostgreSQL must step over
 * at the next, so a 100,000-item copy took minutes, growing with the square
 * of the items (figures: docs/benchmarks.md).
 */
const ITEMS_IN_ORDER = `
CREATE INDEX items_in_order ON items (run_id, seq);
${countItemFunction(COUNT_ITEM_BODY)}`;

/** The count trigger's function doing `body`, unless a bulk load set the counts aside (version 12). */
function countItemFunction(body: string): string {
  return `
CREATE OR REPLACE FUNCTION ib_count_item() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $f$
BEGIN
  IF current_setting('${COUNTS_DEFERRED}', true) = 'on' THEN
    RETURN NULL;
  END IF;
${body}
$f$;
`;
}

/**
 * Version 11, SQLite's migration 11 (../migrations/0011-run-step-counts.ts):
 * a run's item counts per step and state and its spend per step, kept by a
 * trigger on `items`, so progress and spend read a few rows per step. SQLite's
 * two-argument ROUND on a REAL is `round(double precision, integer)` here
 * (PostgreSQL rounds only numerics to places), so the ops' SQL reads alike.
 */
const RUN_STEP_COUNTS = `
CREATE FUNCTION round(v double precision, places integer) RETURNS double precision
  LANGUAGE sql IMMUTABLE STRICT SET search_path FROM CURRENT AS $f$
  SELECT pg_catalog.round(v::numeric, places)::double precision
$f$;

CREATE TABLE run_steps (
  run_id text NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  step_id text NOT NULL,
  first_row bigint NOT NULL,
  reserved_credits double precision NOT NULL DEFAULT 0,
  charged_credits double precision NOT NULL DEFAULT 0,
  refunded_credits double precision NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, step_id)
);

CREATE TABLE run_step_states (
  run_id text NOT NULL,
  step_id text NOT NULL,
  state text NOT NULL,
  items bigint NOT NULL,
  PRIMARY KEY (run_id, step_id, state),
  FOREIGN KEY (run_id, step_id) REFERENCES run_steps(run_id, step_id) ON DELETE CASCADE
);

${countsOfItems('').join(';\n')};

CREATE FUNCTION ib_count_item() RETURNS trigger LANGUAGE plpgsql
  SET search_path FROM CURRENT AS $f$
BEGIN
${COUNT_ITEM_BODY}
$f$;

CREATE TRIGGER items_counted_on_insert_or_delete AFTER INSERT OR DELETE ON items
  FOR EACH ROW EXECUTE FUNCTION ib_count_item();

CREATE TRIGGER items_counted_on_update
  AFTER UPDATE OF run_id, step_id, state, reserved_credits, charged_credits, refunded_credits ON items
  FOR EACH ROW
  WHEN (OLD.run_id IS DISTINCT FROM NEW.run_id OR OLD.step_id IS DISTINCT FROM NEW.step_id
    OR OLD.state IS DISTINCT FROM NEW.state
    OR OLD.reserved_credits IS DISTINCT FROM NEW.reserved_credits
    OR OLD.charged_credits IS DISTINCT FROM NEW.charged_credits
    OR OLD.refunded_credits IS DISTINCT FROM NEW.refunded_credits)
  EXECUTE FUNCTION ib_count_item();
`;

/** `pg_catalog.round` to 6 places of a double, inline (the schema's `round` is a call each time). */
const round6 = (sum: string) => `pg_catalog.round((${sum})::numeric, 6)::double precision`;

/**
 * Version 13: the count trigger moves what an item's update changed and
 * nothing else. An item changes state or money four times in its life, and
 * each time version 11's trigger took the whole row out of its step and put
 * it back (five statements, six calls of a SQL function that PostgreSQL
 * cannot inline): at 100,000 items, most of the server's time per item
 * (pg_stat_statements, docs/benchmarks.md). A state change is now its two
 * counts; a money change is one update of its step, rounded as before
 * (the old row taken out, then the new one added, each to 6 places). An
 * insert, a delete or a move to another run or step is version 11's body.
 */
const STEP_COUNTS_BY_CHANGE =
  countItemFunction(`  IF TG_OP = 'UPDATE' AND OLD.run_id = NEW.run_id AND OLD.step_id = NEW.step_id THEN
    IF OLD.reserved_credits <> NEW.reserved_credits OR OLD.charged_credits <> NEW.charged_credits
        OR OLD.refunded_credits <> NEW.refunded_credits THEN
      UPDATE run_steps SET
          reserved_credits = ${round6(`${round6('reserved_credits - OLD.reserved_credits')} + NEW.reserved_credits`)},
          charged_credits = ${round6(`${round6('charged_credits - OLD.charged_credits')} + NEW.charged_credits`)},
          refunded_credits = ${round6(`${round6('refunded_credits - OLD.refunded_credits')} + NEW.refunded_credits`)}
        WHERE run_id = NEW.run_id AND step_id = NEW.step_id;
    END IF;
    IF OLD.state <> NEW.state THEN
      UPDATE run_step_states SET items = items - 1
        WHERE run_id = OLD.run_id AND step_id = OLD.step_id AND state = OLD.state;
      INSERT INTO run_step_states (run_id, step_id, state, items)
        VALUES (NEW.run_id, NEW.step_id, NEW.state, 1)
        ON CONFLICT (run_id, step_id, state) DO UPDATE SET items = run_step_states.items + 1;
    END IF;
    RETURN NULL;
  END IF;
${COUNT_ITEM_BODY}`);

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  { version: 10, name: 'initial (the model of SQLite version 10)', sql: FUNCTIONS + TABLES },
  { version: 11, name: 'run-step-counts', sql: RUN_STEP_COUNTS },
  { version: 12, name: 'items-in-order', sql: ITEMS_IN_ORDER },
  { version: 13, name: 'step-counts-by-change', sql: STEP_COUNTS_BY_CHANGE },
];
