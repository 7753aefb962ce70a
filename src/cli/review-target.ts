/**
 * What the review commands (`approve`, `reject`, `export`) work on: the job
 * file's name, its journal (`--journal` / $IBATCH_JOURNAL, else beside the
 * job) and the output folder its newest run wrote to (else the job's).
 * `approve`/`reject` open the journal as a writer without the job's lock (a
 * decision is one append in its own transaction, safe beside a running `run`:
 * WAL); `export` opens it read-only. `approve`, `reject` and `review` put
 * their decisions into the manifest the same way (manifestWithDecisions).
 */
import { loadJob } from '../job/index.js';
import { type Journal, openJournal, RUN_STATUS } from '../journal/index.js';
import { describedKeysOf } from '../library/index.js';
import { type DescribedItems, readerOutputDir } from '../outputs/index.js';
import { newestRunOf } from '../review/index.js';
import { writeRunOutputs } from '../scheduler/index.js';
import { cliLogger } from './cli-logger.js';
import type { CliIo } from './command.js';
import { resolveTarget } from './status-target.js';

export interface ReviewTarget {
  readonly jobName: string;
  readonly outputDir: string;
  readonly journal: Journal;
  /** The items the job file describes now (undefined when it does not expand offline). */
  readonly described: DescribedItems | undefined;
}

/** Opens the job's journal (read-only unless `write`) and finds its output folder; the caller closes it. */
export async function openReviewTarget(
  io: CliIo,
  jobFile: string,
  journalOption: string | undefined,
  write: boolean,
): Promise<ReviewTarget> {
  const target = resolveTarget(io, jobFile, journalOption);
  const job = loadJob(target.jobPath ?? jobFile, { readsOutputsOnly: true });
  const { keys: described } = await describedKeysOf(job);
  // No job name: the journal's own writer lock (for writers that run no job),
  // held for a moment, never the job's lock a `run` holds.
  const journal = await openJournal(
    target.journalPath,
    write ? { wait: 10_000 } : { readonly: true },
  );
  try {
    return {
      jobName: job.name,
      outputDir: reviewOutputDir(journal, job.name, job.output),
      journal,
      described,
    };
  } catch (error) {
    journal.close();
    throw error;
  }
}

/** The output folder of the job's newest run (readerOutputDir), else the job file's `output`. */
export function reviewOutputDir(journal: Journal, jobName: string, jobOutput: string): string {
  return readerOutputDir(newestRunOf(journal, jobName), jobOutput);
}

/**
 * Rewrites the manifest of `outputDir` from the journal, decisions included
 * (the review columns), unless the job's newest run is still running: that
 * run writes them when it ends, and a rewrite now would race its own.
 */
export function manifestWithDecisions(
  io: CliIo,
  journal: Journal,
  jobName: string,
  outputDir: string,
  /** The items the job file describes now (which rows are retired). */
  described?: DescribedItems,
): void {
  const newest = newestRunOf(journal, jobName);
  if (newest.status === RUN_STATUS.running) {
    io.stderr.write(
      `ibatch: run ${newest.runId} is running: it writes the decisions into the manifest when it ends\n`,
    );
  } else {
    // A wait for another process's change of the manifest says so.
    writeRunOutputs(journal, newest.runId, outputDir, {
      ...(described ? { described } : {}),
      logger: cliLogger(io),
    });
  }
}
