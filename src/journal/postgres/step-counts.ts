/**
 * The per-step counts and spend of a run's items on PostgreSQL, kept by a
 * trigger on `items`: versions 11 (the tables and the trigger), 12 (a bulk
 * load may set the trigger aside) and 13 (the trigger moves only what
 * changed) of the schema (schema.ts), and the SQL a bulk load counts with.
 * SQLite's are its migration 11 (../migrations/0011-run-step-counts.ts).
 */
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
 * statements, each taking the parameters `where` names. `adding`: added to
 * the counts the steps already have (items added to a run that has some,
 * store.ts `keyedItemsInBulk`), as the trigger adds one item.
 */
export function countsOfItems(where: string, adding = false): [string, string] {
  return [
    `INSERT INTO run_steps (run_id, step_id, first_row, reserved_credits, charged_credits, refunded_credits)
  SELECT run_id, step_id, MIN(seq), round(SUM(reserved_credits), 6),
    round(SUM(charged_credits), 6), round(SUM(refunded_credits), 6)
  FROM items ${where} GROUP BY run_id, step_id${
    adding
      ? `
  ON CONFLICT (run_id, step_id) DO UPDATE SET
    first_row = least(run_steps.first_row, excluded.first_row),
    reserved_credits = round(run_steps.reserved_credits + excluded.reserved_credits, 6),
    charged_credits = round(run_steps.charged_credits + excluded.charged_credits, 6),
    refunded_credits = round(run_steps.refunded_credits + excluded.refunded_credits, 6)`
      : ''
  }`,
    `INSERT INTO run_step_states (run_id, step_id, state, items)
  SELECT run_id, step_id, state, COUNT(*) FROM items ${where} GROUP BY run_id, step_id, state${
    adding
      ? `
  ON CONFLICT (run_id, step_id, state) DO UPDATE SET items = run_step_states.items + excluded.items`
      : ''
  }`,
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
export const ITEMS_IN_ORDER = `
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
export const RUN_STEP_COUNTS = `
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
export const STEP_COUNTS_BY_CHANGE =
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
