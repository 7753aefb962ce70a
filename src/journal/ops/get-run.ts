import { FINISHED_RUN_STATUSES, type RunRecord, runRecordSchema } from '../records.js';
import type { JournalDb } from '../sql.js';
import { RUN_COLUMNS } from './columns.js';

export function getRun(j: JournalDb, runId: string): RunRecord | undefined {
  const row = j.stmt(`SELECT ${RUN_COLUMNS} FROM runs WHERE run_id = ?`).get(runId);
  return row === undefined ? undefined : runRecordSchema.parse(row);
}

/** The newest run of a job that is not finished (`run` itself resumes only the newest run on its service: next-run.ts). */
export function findUnfinishedRun(j: JournalDb, jobName: string): RunRecord | undefined {
  const finished = FINISHED_RUN_STATUSES.map((s) => `'${s}'`).join(', ');
  const row = j
    .stmt(
      `SELECT ${RUN_COLUMNS} FROM runs WHERE job_name = ? AND status NOT IN (${finished})
       ORDER BY created_at DESC, rowid DESC LIMIT 1`,
    )
    .get(jobName);
  return row === undefined ? undefined : runRecordSchema.parse(row);
}

/** Runs, newest first, optionally of one job. */
export function listRuns(j: JournalDb, jobName?: string, limit = 100): RunRecord[] {
  const rows =
    jobName === undefined
      ? j
          .stmt(`SELECT ${RUN_COLUMNS} FROM runs ORDER BY created_at DESC, rowid DESC LIMIT ?`)
          .all(limit)
      : j
          .stmt(
            `SELECT ${RUN_COLUMNS} FROM runs WHERE job_name = ?
             ORDER BY created_at DESC, rowid DESC LIMIT ?`,
          )
          .all(jobName, limit);
  return rows.map((row) => runRecordSchema.parse(row));
}
