/**
 * The rows of a manifest rebuild of one job (`ManifestWriter.replace`): the
 * rows kept as they are around the job's, and the job's rows marked
 * `current`, each key once, checked on their way to the files.
 */
import { CurrentRule, type DescribedItems } from './current.js';
import { checkedRow } from './manifest-files.js';
import {
  addVarNames,
  csvColumnsOf,
  type ManifestCsvColumn,
  type ManifestRow,
} from './manifest-row.js';
import type { RowSpool } from './row-spool.js';
import { RowsOnce } from './rows-once.js';

/** The files a rows rebuild of one job writes around: see `ManifestWriter.replace`. */
export interface FolderRows {
  /** Rows kept as they are on disk (other jobs'), before the job's rows. */
  readonly before: readonly ManifestRow[];
  /** The job's rows, iterated once, marked `current` by the rewrite. */
  readonly own: () => Iterable<ManifestRow>;
  /** Rows kept as they are on disk, after the job's rows. */
  readonly after: readonly ManifestRow[];
}

/**
 * The rows a `replace` writes, checked (the job's marked `current`, a key
 * repeated among them written once, where it first appears, with its last
 * row), and the CSV columns of all of them. The kept rows are iterated once
 * for the columns and once for the files; the job's once, into `spool`,
 * which gives them back for the files (see `replace`).
 */
export function checkedFolderRows(
  folder: FolderRows,
  spool: RowSpool,
  onRow: ((row: ManifestRow) => void) | undefined,
  described: DescribedItems | undefined,
): [Iterable<ManifestRow>, ManifestCsvColumn[]] {
  const marker = new CurrentRule(described);
  const names = new Set<string>();
  for (const row of folder.before) addVarNames(names, row);
  const once = new RowsOnce();
  for (const row of folder.own()) {
    spool.add(row);
    marker.see(row);
    addVarNames(names, row);
    once.see(row);
  }
  for (const row of folder.after) addVarNames(names, row);
  function* checked(): Generator<ManifestRow> {
    for (const row of folder.before) yield checkedRow(row);
    // The spool's rows (and a repeated key's last, built for this rewrite) are its own copies.
    for (const own of once.once(spool.rows())) {
      marker.markInPlace(own);
      const row = checkedRow(own);
      onRow?.(row);
      yield row;
    }
    for (const row of folder.after) yield checkedRow(row);
  }
  return [checked(), csvColumnsOf(names)];
}
