import { RUN_STATUS, type RunStatus } from '../records.js';
import type { JournalDb } from '../sql.js';

/**
 * Sets a run's status. `finishedAt` is stamped for every status but `running`
 * (a stopped run is resumable, but its last stop time is still worth showing).
 */
export function setRunStatus(j: JournalDb, runId: string, status: RunStatus): void {
  const now = j.now();
  j.stmt(
    `UPDATE runs SET status = @status, updated_at = @now,
       finished_at = CASE WHEN @status = '${RUN_STATUS.running}' THEN NULL ELSE @now END
     WHERE run_id = @runId`,
  ).run({ runId, status, now });
}

/**
 * Persists an account-wide "do not send before" time (a long 429 wait, a
 * training-bucket wait) so a restarted run honours it; null clears it.
 */
export function setRunNotBefore(j: JournalDb, runId: string, notBefore: number | null): void {
  j.stmt('UPDATE runs SET not_before = ?, updated_at = ? WHERE run_id = ?').run(
    notBefore,
    j.now(),
    runId,
  );
}

/** Changes the budget of a run (a later `run` with a raised `budget`). */
export function setRunBudget(j: JournalDb, runId: string, budget: number | null): void {
  j.stmt('UPDATE runs SET budget = ?, updated_at = ? WHERE run_id = ?').run(budget, j.now(), runId);
}

/**
 * Records the folder a run writes to and the machine it is on (its output
 * folder was moved, or another machine resumed it): the two name one place.
 */
export function setRunOutputDir(
  j: JournalDb,
  runId: string,
  outputDir: string,
  host: string,
): void {
  j.stmt(
    `UPDATE runs SET options_json = json_set(COALESCE(options_json, '{}'), '$.outputDir', ?, '$.host', ?),
       updated_at = ? WHERE run_id = ?`,
  ).run(outputDir, host, j.now(), runId);
}

/**
 * Records what the job file described when the run was last driven
 * (src/scheduler/job-facts.ts: its input's fingerprint and what it changed
 * in the job's record), as one text in the run's options: both stores' `json_set`
 * set a text value.
 */
export function setRunJobFacts(j: JournalDb, runId: string, facts: string): void {
  j.stmt(
    `UPDATE runs SET options_json = json_set(COALESCE(options_json, '{}'), '$.jobFacts', ?)
     WHERE run_id = ?`,
  ).run(facts, runId);
}

/**
 * Moves a run to another service (`run --service-moved`): its spend, items
 * and resume are counted there from now on.
 */
export function setRunService(j: JournalDb, runId: string, service: string, scope: string): void {
  j.stmt(
    `UPDATE runs SET options_json = json_set(COALESCE(options_json, '{}'), '$.service', ?, '$.scope', ?),
       updated_at = ? WHERE run_id = ?`,
  ).run(service, scope, j.now(), runId);
}

/**
 * Records the tags a resumed run is driven with (the job file's `tags:`
 * changed): the run's whole spend is then counted under the new ones.
 */
export function setRunTags(
  j: JournalDb,
  runId: string,
  tags: Readonly<Record<string, string>>,
): void {
  j.stmt('UPDATE runs SET tags_json = ?, updated_at = ? WHERE run_id = ?').run(
    JSON.stringify(tags),
    j.now(),
    runId,
  );
}
