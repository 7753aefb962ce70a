/**
 * Migration 11: a run's item counts per step and state, and its spend per
 * step, kept by triggers on `items`, so the progress block, the spend line
 * and `status` read a few rows per step instead of counting every item of the
 * run. They are read several times a second while a run drives its items: a
 * count that scans the run made the cost of each item grow with the job.
 *
 * `first_row` is the rowid of the step's first item, so steps list in the
 * order they first appear, as the scan they replace ordered them. Credits are
 * rounded to the micro-credit at each change (as `tidyCredits` rounds sums),
 * so reserving and releasing fractional credits leaves no float residue.
 * A step whose items were all removed keeps a row with no counts; reads skip it.
 *
 * A read-only open of a version-10 journal (which cannot migrate) derives the
 * two tables once in its temporary schema from the same queries the backfill
 * uses, so `status` and `report` read an older journal as it is.
 *
 * Plain SQLite SQL in one place, so another journal store can follow the same model.
 */
const STEPS_OF_ITEMS = `SELECT run_id, step_id, MIN(rowid) AS first_row,
    ROUND(SUM(reserved_credits), 6) AS reserved_credits,
    ROUND(SUM(charged_credits), 6) AS charged_credits,
    ROUND(SUM(refunded_credits), 6) AS refunded_credits
  FROM items GROUP BY run_id, step_id`;
const STATES_OF_ITEMS = `SELECT run_id, step_id, state, COUNT(*) AS items
  FROM items GROUP BY run_id, step_id, state`;

/** An item row as it now is, added to its step's counts and spend. */
const COUNT_NEW = `  INSERT INTO run_steps (run_id, step_id, first_row) VALUES (NEW.run_id, NEW.step_id, NEW.rowid)
    ON CONFLICT (run_id, step_id) DO NOTHING;
  UPDATE run_steps SET
      reserved_credits = ROUND(reserved_credits + NEW.reserved_credits, 6),
      charged_credits = ROUND(charged_credits + NEW.charged_credits, 6),
      refunded_credits = ROUND(refunded_credits + NEW.refunded_credits, 6)
    WHERE run_id = NEW.run_id AND step_id = NEW.step_id;
  INSERT INTO run_step_states (run_id, step_id, state, items)
    VALUES (NEW.run_id, NEW.step_id, NEW.state, 1)
    ON CONFLICT (run_id, step_id, state) DO UPDATE SET items = items + 1;`;
/** An item row as it was, taken off its step's counts and spend. */
const UNCOUNT_OLD = `  UPDATE run_steps SET
      reserved_credits = ROUND(reserved_credits - OLD.reserved_credits, 6),
      charged_credits = ROUND(charged_credits - OLD.charged_credits, 6),
      refunded_credits = ROUND(refunded_credits - OLD.refunded_credits, 6)
    WHERE run_id = OLD.run_id AND step_id = OLD.step_id;
  UPDATE run_step_states SET items = items - 1
    WHERE run_id = OLD.run_id AND step_id = OLD.step_id AND state = OLD.state;`;

/** The triggers that keep the counts: created here, and again where `items` is rebuilt (migration 15). */
export const ITEM_COUNT_TRIGGERS = `
CREATE TRIGGER items_counted_on_insert AFTER INSERT ON items BEGIN
${COUNT_NEW}
END;

CREATE TRIGGER items_counted_on_delete AFTER DELETE ON items BEGIN
${UNCOUNT_OLD}
END;

CREATE TRIGGER items_counted_on_update
  AFTER UPDATE OF run_id, step_id, state, reserved_credits, charged_credits, refunded_credits ON items
  WHEN OLD.run_id IS NOT NEW.run_id OR OLD.step_id IS NOT NEW.step_id OR OLD.state IS NOT NEW.state
    OR OLD.reserved_credits IS NOT NEW.reserved_credits OR OLD.charged_credits IS NOT NEW.charged_credits
    OR OLD.refunded_credits IS NOT NEW.refunded_credits
BEGIN
${UNCOUNT_OLD}
${COUNT_NEW}
END;
`;

export const migration0011 = {
  version: 11,
  name: 'run-step-counts',
  readOnlyShim: `
CREATE TEMP TABLE run_steps AS ${STEPS_OF_ITEMS};
CREATE TEMP TABLE run_step_states AS ${STATES_OF_ITEMS};
`,
  sql: `
CREATE TABLE run_steps (
  run_id TEXT NOT NULL REFERENCES runs(run_id) ON DELETE CASCADE,
  step_id TEXT NOT NULL,
  first_row INTEGER NOT NULL,
  reserved_credits REAL NOT NULL DEFAULT 0,
  charged_credits REAL NOT NULL DEFAULT 0,
  refunded_credits REAL NOT NULL DEFAULT 0,
  PRIMARY KEY (run_id, step_id)
) STRICT, WITHOUT ROWID;

CREATE TABLE run_step_states (
  run_id TEXT NOT NULL,
  step_id TEXT NOT NULL,
  state TEXT NOT NULL,
  items INTEGER NOT NULL,
  PRIMARY KEY (run_id, step_id, state),
  FOREIGN KEY (run_id, step_id) REFERENCES run_steps(run_id, step_id) ON DELETE CASCADE
) STRICT, WITHOUT ROWID;

INSERT INTO run_steps (run_id, step_id, first_row, reserved_credits, charged_credits, refunded_credits)
  ${STEPS_OF_ITEMS};

INSERT INTO run_step_states (run_id, step_id, state, items) ${STATES_OF_ITEMS};

${ITEM_COUNT_TRIGGERS}`,
} as const;
