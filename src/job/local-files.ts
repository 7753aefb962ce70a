/**
 * The files a job owns beside its job file: the default journal in the
 * job's `.ibatch/` folder, and the inputs it reads (the job file, rows files,
 * upload-set files). Outputs may never land on any of them.
 */
import { join } from 'node:path';
import { defaultModelCachePath } from './model-catalog.js';
import type { LoadedJob } from './types.js';

/** `.ibatch/journal.db` beside the job file: the journal when none is named. */
export function defaultJournalPath(jobDir: string): string {
  return join(jobDir, '.ibatch', 'journal.db');
}

/**
 * The job file, its rows files, its upload-set files and the model cache.
 * Local media files named in inputs are known only per item: the run adds
 * them (see scheduler/run-job.ts).
 */
export function jobInputPaths(job: LoadedJob): string[] {
  const rows = job.steps.flatMap((step) => (step.rows === undefined ? [] : [step.rows]));
  const uploads = [...job.uploads.values()].flatMap((set) => set.files);
  return [job.file, defaultModelCachePath(job.dir), ...rows, ...uploads];
}
