import { redact } from '../../shared/index.js';
import {
  FAILED_ITEM_STATES,
  ITEM_STATE,
  OUTPUT_STATE,
  type OutputRecord,
  type OutputState,
  outputRecordSchema,
  sqlStates,
} from '../records.js';
import { type JournalDb, type Soon, soonRecords } from '../sql.js';
import { ITEM_ROW, OUTPUT_COLUMNS, OUTPUT_COLUMNS_WRITTEN, OUTPUTS } from './columns.js';

/**
 * A run's outputs (optionally in one state, optionally of one item), in item
 * then output order. One item's are found by key, not by filtering the run's:
 * a run asks for them as each item finishes.
 */
export function listOutputs(
  j: JournalDb,
  runId: string,
  state?: OutputState,
  itemKey?: string,
): OutputRecord[] {
  const ofItem = itemKey === undefined ? '' : 'AND i.item_key = @itemKey';
  return j
    .stmt(
      `SELECT ${OUTPUT_COLUMNS} FROM ${OUTPUTS} WHERE i.run_id = @runId ${ofItem}
         AND (@state IS NULL OR o.state = @state)
       ORDER BY o.rowid`,
    )
    .all({ runId, state: state ?? null, ...(itemKey === undefined ? {} : { itemKey }) })
    .map((row) => outputRecordSchema.parse(row));
}

/**
 * The file of each downloaded output of a run with its owner (item and
 * number), one row at a time: what names a run's outputs took in the output
 * folder, without reading and checking each whole record (a resume's run
 * holds tens of thousands of them, and whole records at once would be
 * held only to be dropped).
 */
export function eachDownloadedFile(
  j: JournalDb,
  runId: string,
  visit: (output: { readonly itemKey: string; readonly n: number; readonly file: string }) => void,
): void {
  const rows = j
    .stmt(
      `SELECT i.item_key AS itemKey, o.n AS n, o.file AS file FROM ${OUTPUTS}
       WHERE i.run_id = ? AND o.state = '${OUTPUT_STATE.downloaded}'
         AND o.file IS NOT NULL AND o.file <> ''
       ORDER BY o.rowid`,
    )
    .iterate(runId) as Iterable<{ itemKey: string; n: number; file: string }>;
  for (const row of rows) visit(row);
}

/** The outputs of some items of a run (a page of it), in item then output order. */
export function listOutputsOfItems(
  j: JournalDb,
  runId: string,
  itemKeys: readonly string[],
): OutputRecord[] {
  return listOutputsOfItemsSoon(j, runId, itemKeys).take();
}

/** `listOutputsOfItems`, sent now to be taken later (`Statement.allSoon`). */
export function listOutputsOfItemsSoon(
  j: JournalDb,
  runId: string,
  itemKeys: readonly string[],
): Soon<OutputRecord[]> {
  const rows = j
    .stmt(
      `SELECT ${OUTPUT_COLUMNS} FROM ${OUTPUTS} WHERE i.run_id = ?
         AND i.item_key IN (SELECT value FROM json_each(?))
       ORDER BY o.rowid`,
    )
    .allSoon(runId, JSON.stringify(itemKeys));
  return soonRecords(rows, outputRecordSchema);
}

/** One output of an item, or undefined. */
export function getOutput(
  j: JournalDb,
  runId: string,
  itemKey: string,
  n: number,
): OutputRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${OUTPUT_COLUMNS} FROM ${OUTPUTS} WHERE i.run_id = ? AND i.item_key = ? AND o.n = ?`,
    )
    .get(runId, itemKey, n);
  return row === undefined ? undefined : outputRecordSchema.parse(row);
}

/**
 * The downloaded output of a generation, preferring `runId`'s (a `from:`
 * item's source may have been downloaded by an earlier run), else undefined.
 */
export function findDownloadedOutput(
  j: JournalDb,
  generationId: string,
  runId: string,
): OutputRecord | undefined {
  const row = j
    .stmt(
      `SELECT ${OUTPUT_COLUMNS} FROM ${OUTPUTS}
       WHERE o.generation_id = @generationId AND o.state = '${OUTPUT_STATE.downloaded}'
       ORDER BY i.run_id = @runId DESC, o.updated_at DESC LIMIT 1`,
    )
    .get({ generationId, runId });
  return row === undefined ? undefined : outputRecordSchema.parse(row);
}

/** One output file of a run as `listOutputFiles` names it. */
export interface OutputFile {
  readonly stepId: string;
  readonly itemKey: string;
  readonly n: number;
}

/**
 * The output files a run's manifest rows list with a `file`
 * (the rule of outputs/manifest-rows.ts `itemRows` and manifest-row-of-item.ts `fileRow`; a test holds the two equal: test/review/review-counts.test.ts): each downloaded output of
 * a generation item that succeeded, or that failed for good after it was
 * paid for (an output with a URL). `o` is the output, `i` its item; the
 * run is the first parameter.
 */
const OUTPUT_FILES = `FROM ${OUTPUTS}
  WHERE i.run_id = ? AND o.state = '${OUTPUT_STATE.downloaded}'
    AND o.file <> '' AND o.sha256 <> '' AND i.kind <> 'training'
    AND (i.state = '${ITEM_STATE.succeeded}'
      OR (i.state IN (${sqlStates(FAILED_ITEM_STATES)}) AND EXISTS (
        SELECT 1 FROM outputs u WHERE u.item_row = o.item_row AND u.url IS NOT NULL)))`;

/**
 * The output files of a run (`OUTPUT_FILES`), in item then output order;
 * with `itemKeys`, of those items only. A lean read (three columns, no
 * record parsing) for what counts files, like the review counts of
 * `status`: the full rows of a 100,000-output run take seconds.
 */
export function listOutputFiles(
  j: JournalDb,
  runId: string,
  itemKeys?: readonly string[],
): OutputFile[] {
  const ofItems = itemKeys ? 'AND i.item_key IN (SELECT value FROM json_each(?))' : '';
  return j
    .stmt(
      `SELECT i.step_id AS stepId, i.item_key AS itemKey, o.n AS n ${OUTPUT_FILES} ${ofItems}
       ORDER BY i.rowid, o.rowid`,
    )
    .all(runId, ...(itemKeys ? [JSON.stringify(itemKeys)] : [])) as OutputFile[];
}

/** How many output files (`listOutputFiles`) each step of a run has, in the order steps first appear. */
export function countOutputFiles(
  j: JournalDb,
  runId: string,
): { readonly stepId: string; readonly files: number }[] {
  return j
    .stmt(
      `SELECT i.step_id AS stepId, count(*) AS files ${OUTPUT_FILES}
       GROUP BY i.step_id ORDER BY min(i.rowid)`,
    )
    .all(runId) as { stepId: string; files: number }[];
}

export interface DownloadedOutput {
  /** Path relative to the run's output folder. */
  readonly file: string;
  readonly sha256: string;
  readonly bytes: number;
  readonly contentType: string | null;
}

/** Marks an output downloaded (after its file was renamed into place); returns it as stored. */
export function markOutputDownloaded(
  j: JournalDb,
  runId: string,
  itemKey: string,
  n: number,
  file: DownloadedOutput,
): OutputRecord | undefined {
  const row = j
    .stmt(
      `UPDATE outputs SET state = '${OUTPUT_STATE.downloaded}', file = @file, sha256 = @sha256, bytes = @bytes,
         content_type = @contentType, error = NULL, updated_at = @now
       WHERE item_row = ${ITEM_ROW} AND n = @n
       RETURNING ${OUTPUT_COLUMNS_WRITTEN}`,
    )
    .get({ ...file, runId, itemKey, n, now: j.now() });
  return row === undefined ? undefined : outputRecordSchema.parse(row);
}

/**
 * Records that a downloaded output's file moved to `file` (set aside so a
 * newer output of its item takes the readable name); nothing else changes.
 */
export function moveOutputFile(
  j: JournalDb,
  runId: string,
  itemKey: string,
  n: number,
  file: string,
): void {
  j.stmt(
    `UPDATE outputs SET file = @file
     WHERE item_row = ${ITEM_ROW} AND n = @n AND state = '${OUTPUT_STATE.downloaded}'`,
  ).run({ file, runId, itemKey, n });
}

/** Marks an output's download failed for good, with the reason. */
export function markOutputFailed(
  j: JournalDb,
  runId: string,
  itemKey: string,
  n: number,
  error: string,
): void {
  j.stmt(
    `UPDATE outputs SET state = '${OUTPUT_STATE.failed}', error = @error, updated_at = @now
     WHERE item_row = ${ITEM_ROW} AND n = @n`,
  ).run({ runId, itemKey, n, error: redact(error), now: j.now() });
}
