/**
 * The outputs a hand-off takes (`ibatch export`, delivery): the current
 * outputs that have a file, or only those whose decision in force is
 * `approved`.
 */
import type { ManifestRow } from '../outputs/index.js';

/** The rows handed off: current, with a file, and approved when `approvedOnly`. */
export function chosenRows(rows: readonly ManifestRow[], approvedOnly: boolean): ManifestRow[] {
  return rows.filter(
    (row) => row.current === true && row.file && (!approvedOnly || row.review === 'approved'),
  );
}
