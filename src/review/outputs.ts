/**
 * The outputs a review decides on: the manifest rows of a job's output
 * folder as the journal rebuilds them (the scheduler's one builder), and the
 * files a person or a script names, resolved to them.
 */
import path from 'node:path';
import type { Journal, RunRecord } from '../journal/index.js';
import {
  currentStateOf,
  type DescribedItems,
  folderManifestRows,
  type ManifestRow,
  RETIRED_REASON,
} from '../outputs/index.js';
import { UsageError } from '../shared/index.js';
import { expandGlobs } from '../uploads/index.js';

/** One output a decision names: the run that made it, its item and its index. */
export interface ReviewedOutput {
  readonly runId: string;
  readonly itemKey: string;
  readonly n: number;
  /** Its manifest row (file relative to the output folder). */
  readonly row: ManifestRow;
}

/** The job's newest run: the one whose folder rows the review reads. */
export function newestRunOf(journal: Pick<Journal, 'listRuns'>, jobName: string): RunRecord {
  const run = journal.listRuns(jobName, 1)[0];
  if (!run) throw new UsageError(`No run of job "${jobName}" in the journal: nothing to review`);
  return run;
}

/**
 * The rows of every output file of the job in `outputDir` the journal knows,
 * each marked `current` (src/outputs/current.ts; `described`: the items the
 * job file describes now).
 */
export function outputRows(
  journal: Journal,
  jobName: string,
  outputDir: string,
  described: DescribedItems | undefined,
): ManifestRow[] {
  const run = newestRunOf(journal, jobName);
  return folderManifestRows(journal, run, outputDir, described).filter(
    (row) => row.file !== undefined && row.runId !== undefined,
  );
}

const GLOB_CHARS = /[*?[\]{}]/;

/**
 * The outputs named by `files`: each a manifest `file` (relative to the
 * output folder) or a glob over the folder. A glob takes only current
 * outputs (src/outputs/current.ts). A name or glob that names no output of
 * the job, or a name of an output that is not current, is a usage error
 * naming it (and the current file instead, or that its item was removed
 * from the job), exit 2, before anything is recorded.
 */
export function resolveOutputs(
  journal: Journal,
  job: { readonly name: string },
  outputDir: string,
  files: readonly string[],
  described: DescribedItems | undefined,
): ReviewedOutput[] {
  const rows = outputRows(journal, job.name, outputDir, described);
  const byFile = new Map<string, ManifestRow>();
  // Rows in run order: a file name written twice (never, names are unique) resolves to the newest.
  for (const row of rows) if (row.file) byFile.set(row.file, row);
  const found = new Map<string, ManifestRow>();
  const unknown: string[] = [];
  const notCurrent: string[] = [];
  for (const name of files) {
    const exact = byFile.get(toPosix(name));
    if (exact && !exact.current) {
      notCurrent.push(notCurrentText(exact, rows));
      continue;
    }
    const matches = exact
      ? [exact]
      : GLOB_CHARS.test(name)
        ? expandGlobs(outputDir, [name]).files.flatMap((file) => {
            const row = byFile.get(toPosix(path.relative(path.resolve(outputDir), file)));
            return row?.current ? [row] : [];
          })
        : [];
    if (matches.length === 0) unknown.push(name);
    for (const row of matches) if (row.file) found.set(row.file, row);
  }
  if (notCurrent.length > 0) {
    throw new UsageError(`not a current output of job "${job.name}": ${notCurrent.join('; ')}`);
  }
  if (unknown.length > 0) {
    throw new UsageError(
      `no current output of job "${job.name}" in ${outputDir}: ${unknown.join(', ')} (FILE is the manifest's \`file\`, relative to the output folder)`,
    );
  }
  return [...found.values()].map((row) => ({
    runId: row.runId ?? '',
    itemKey: row.item,
    n: row.n ?? 1,
    row,
  }));
}

/** Why a named file is refused: what replaced it, or that its item left the job. */
function notCurrentText(row: ManifestRow, rows: readonly ManifestRow[]): string {
  if (currentStateOf(row) === 'retired') return `${row.file} (its item was ${RETIRED_REASON})`;
  const sameItem = rows.filter((r) => r.current && r.step === row.step && r.item === row.item);
  const replacement = sameItem.find((r) => r.n === row.n) ?? sameItem[0];
  return replacement?.file
    ? `${row.file} is ${row.currentReason}: the current file is ${replacement.file}`
    : `${row.file} is ${row.currentReason}`;
}

const toPosix = (name: string) => name.split(path.sep).join('/').replace(/^\.\//, '');
