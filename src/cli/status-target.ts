/**
 * Which journal, job and run a command given `[JOB.yaml|RUN_ID]` works on
 * (`status`, `report`, `costs`, `review` and the review commands): a job
 * file is a path ending in .yaml/.yml or an existing file, anything else a
 * run id. The journal: `--journal` / IBATCH_JOURNAL, else `.ibatch/journal.db`
 * beside JOB.yaml, else (a run id or nothing) `.ibatch/journal.db` of the cwd.
 */
import { existsSync, statSync } from 'node:fs';
import path from 'node:path';
import { defaultJournalPath } from '../job/index.js';
import type { CliIo } from './command.js';
import { journalLocation } from './options.js';
import { jobNameOf } from './status-view.js';

export interface StatusTarget {
  readonly journalPath: string;
  readonly jobName?: string;
  readonly jobPath?: string;
  readonly runId?: string;
}

/** A job file is a path ending in .yaml/.yml or an existing file; anything else is a run id. */
export function resolveTarget(
  io: CliIo,
  target: string | undefined,
  journal: string | undefined,
): StatusTarget {
  const explicit = journal ?? io.env.IBATCH_JOURNAL;
  const fromCwd = journalLocation(io.cwd, explicit ?? defaultJournalPath('.'));
  if (!target) return { journalPath: fromCwd };
  const asPath = path.resolve(io.cwd, target);
  const isFile = existsSync(asPath) && statSync(asPath).isFile();
  if (isFile || /\.ya?ml$/i.test(target)) {
    const jobName = jobNameOf(asPath);
    const journalPath = explicit
      ? journalLocation(io.cwd, explicit)
      : defaultJournalPath(path.dirname(asPath));
    return { journalPath, jobName, jobPath: asPath };
  }
  return { journalPath: fromCwd, runId: target };
}
