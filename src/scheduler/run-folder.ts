/**
 * The output folder of a run. A run keeps the folder it started in, so one
 * run's files are never split between two folders and none is left behind:
 * a resumed run whose job now names another folder (`output:` or `--out`
 * changed after a kill or a stop) finishes where its files are, with a
 * warning; the runs after it use the new folder. When the recorded folder is
 * gone (the user moved it to the new place), the run follows it there.
 * A run resumed on another machine (a shared PostgreSQL journal) follows the
 * job's folder on this machine too: the recorded path is the other
 * machine's. In both cases the run's folder `moved`, and the files it lacks,
 * the run's own done ones included, are downloaded again (the repair path).
 * docs/run.md, "Changing the output folder".
 */
import { existsSync } from 'node:fs';
import type { Journal, RunRecord } from '../journal/index.js';
import { recordedElsewhere, recordedOutputDir } from '../outputs/index.js';
import { type Logger, thisMachine } from '../shared/index.js';

/** Where a run writes; `moved` when it left the folder it recorded (its files there are not here). */
export interface RunFolder {
  readonly path: string;
  readonly moved: boolean;
}

export function runOutputDir(
  journal: Journal,
  run: RunRecord,
  wanted: string,
  logger: Pick<Logger, 'warn' | 'info'>,
): RunFolder {
  const recorded = recordedOutputDir(run);
  if (recorded === undefined || recorded === wanted) return { path: wanted, moved: false };
  const recordedOn = recordedElsewhere(run);
  const elsewhere = recordedOn !== undefined;
  if (!elsewhere && existsSync(recorded)) {
    logger.warn(
      { runId: run.runId, outputDir: recorded, jobOutput: wanted },
      `run ${run.runId} writes its files to ${recorded}, where it started: the job now names ${wanted}, which the runs after it use (move ${recorded} there once this run is done, or now, before resuming)`,
    );
    return { path: recorded, moved: false };
  }
  journal.setRunOutputDir(run.runId, wanted, thisMachine());
  logger.info(
    { runId: run.runId, outputDir: wanted, was: recorded },
    elsewhere
      ? `run ${run.runId} continues in ${wanted} (it started on ${String(recordedOn)}, in ${recorded})`
      : `run ${run.runId} continues in ${wanted} (${recorded} is gone)`,
  );
  return { path: wanted, moved: true };
}
