import { RUN_STATUS, type RunRecord } from '../records.js';
import type { JournalDb } from '../sql.js';
import { getRun } from './get-run.js';

export interface CreateRunInput {
  readonly runId: string;
  readonly jobName: string;
  /** Absolute path of the job file, for `status` and `report`. */
  readonly jobPath: string;
  /** sha256 of the job file content: a changed file is detected on resume. */
  readonly jobHash: string;
  /** Most credits this run may commit; null for no budget. */
  readonly budget: number | null;
  /** Snapshot of the effective options (limits, output dir...). Never the API key. */
  readonly options?: Record<string, unknown>;
  /** The job's `tags:` (name -> text), for `ibatch costs`. */
  readonly tags?: Readonly<Record<string, string>>;
}

/** Inserts a new run in status `running`. */
export function createRun(j: JournalDb, input: CreateRunInput): RunRecord {
  const now = j.now();
  j.stmt(
    `INSERT INTO runs (run_id, job_name, job_path, job_hash, status, budget, options_json,
       tags_json, created_at, updated_at)
     VALUES (@runId, @jobName, @jobPath, @jobHash, @status, @budget, @options, @tags, @now, @now)`,
  ).run({
    runId: input.runId,
    jobName: input.jobName,
    jobPath: input.jobPath,
    jobHash: input.jobHash,
    budget: input.budget,
    tags: JSON.stringify(input.tags ?? {}),
    status: RUN_STATUS.running,
    options: JSON.stringify(input.options ?? {}),
    now,
  });
  return getRun(j, input.runId)!;
}
