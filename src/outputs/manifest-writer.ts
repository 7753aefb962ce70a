/**
 * Writes `manifest.jsonl` and `manifest.csv` incrementally and durably: each
 * appended row is written to both files and fsynced before `append` returns,
 * so a run killed with -9 keeps every row it had recorded.
 *
 * Two ways to use it on resume (the journal is the source of truth):
 * - keep appending: `open` reloads the rows already in `manifest.jsonl`
 *   (dropping a line torn by a crash) and `append` skips rows already present;
 * - rebuild: `rewrite(rowsFromJournal)` replaces both files atomically.
 *
 * Several processes may write one folder's manifest at once (jobs sharing
 * the folder): every change (an append, a rewrite) holds the folder's
 * manifest lock (manifest-lock.ts) for its few milliseconds, and a writer
 * that finds the files replaced by another since it last wrote reads them
 * again before appending, so no process's rows are lost.
 *
 * `manifest.csv` starts with a UTF-8 BOM (Excel then reads `café` as UTF-8)
 * and has one column per template variable (`manifestCsvColumns`): a row
 * naming a variable the header lacks rewrites the CSV with the new column.
 */
import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  readSync,
  statSync,
  writeSync,
} from 'node:fs';
import path from 'node:path';
import {
  hash52,
  type Logger,
  makeFolderSync,
  redactDeep,
  removeDeadWritersTemps,
} from '../shared/index.js';
import { csvLine } from './csv.js';
import type { DescribedItems } from './current.js';
import { diskFullCode } from './errors.js';
import { checkedFolderRows, type FolderRows } from './folder-rows.js';
import {
  manifestStat,
  type PrefetchedRows,
  prefetchAsWritten,
  readAsWritten,
  sameStat,
  type WrittenRows,
} from './manifest-as-written.js';
import { checkedRow, MANIFEST_CSV, MANIFEST_JSONL, writeManifestFiles } from './manifest-files.js';
import { withManifestLock } from './manifest-lock.js';
import {
  manifestRowsInOrder,
  type RawRowOwner,
  readManifest,
  readManifestAround,
} from './manifest-read.js';
import {
  addVarNames,
  csvColumnsOf,
  type ManifestCsvColumn,
  type ManifestRow,
  manifestCsvColumns,
  manifestRowKey,
} from './manifest-row.js';
import { RowSpool, spoolOf } from './row-spool.js';
import { RowsOnce } from './rows-once.js';

export type AppendResult = 'appended' | 'unchanged' | 'replaced';

export class ManifestWriter {
  /**
   * A digest of each recorded row's JSON by its key, both as numbers
   * (`hash52`), not the rows: a 100,000-item run appends 100,000 rows, and
   * only "same as recorded?" is asked of them. Two keys sharing a number
   * only send an append down the rewrite path, which finds rows by their
   * real key.
   */
  private digests = new Map<number, number>();
  private jsonlFd: number | undefined;
  private csvFd: number | undefined;
  /** The columns of the CSV on disk, and the template variables they hold. */
  private csvColumns: ManifestCsvColumn[] = manifestCsvColumns([]);
  private csvVars = new Set<string>();
  /**
   * The inodes of both files as this writer last wrote them: another
   * process's rewrite replaces them (new inodes), and this writer's view of
   * the rows and CSV columns is then stale.
   */
  private written: { jsonl: number; csv: number } | undefined;

  private constructor(
    readonly outputDir: string,
    /** Told of a wait for another process's change of the manifest. */
    private readonly logger: Logger | undefined,
  ) {}

  /** Whether the rows on disk were read (and both files repaired): see `load`. */
  private loaded = false;
  /** The rows on disk read ahead of the first append (`readAhead`), while other work goes on. */
  private prefetch: Promise<void> | undefined;
  private prefetched: PrefetchedRows | undefined;
  private closed = false;

  /**
   * Opens (creating if needed) the manifest of `outputDir`. A new manifest's
   * empty files are written here; existing rows are read (and both files
   * repaired when needed: a torn last line, a CSV that lagged behind the
   * JSONL) before the first `append`, not here: a resume's first create
   * does not wait for 20,000 rows to be read, and a run that appends
   * nothing leaves the files to its end's rebuild (`readAhead` starts
   * reading them meanwhile).
   */
  static open(outputDir: string, logger?: Logger): ManifestWriter {
    const writer = new ManifestWriter(path.resolve(outputDir), logger);
    makeFolderSync(writer.outputDir);
    try {
      writer.locked(() => {
        if (!existsSync(path.join(writer.outputDir, MANIFEST_JSONL))) writer.load();
      });
    } catch (error) {
      // No room for the lock or the empty files: the first append (or the
      // run's end rewrite) writes them, where a full disk stops the run.
      if (!diskFullCode(error)) throw error;
    }
    return writer;
  }

  /**
   * Reads the existing rows (once, before appending, and again whenever
   * another process replaced the files since) and rewrites both files from
   * them unless they are exactly as a writer leaves them (`readAsWritten`:
   * a torn line, a CSV behind the JSONL, a repeated key are repaired here).
   * Holding the manifest lock.
   */
  private load(): void {
    if (this.loaded && this.unchangedOnDisk()) return;
    const prefetched = this.prefetched;
    this.prefetched = undefined;
    const written =
      prefetched && sameStat(prefetched.stat, manifestStat(this.outputDir))
        ? prefetched.rows
        : readAsWritten(this.outputDir);
    if (written) this.know(written);
    else this.rewriteFromDisk();
  }

  /**
   * Rewrites both files from the rows on disk, redacted (a torn or foreign
   * line dropped, a repeated key written once: `RowsOnce`), with `extra`
   * after them as if it were the file's last line, without holding the rows:
   * the first pass reads each into a spool (row-spool.ts) and learns the
   * keys and CSV columns, the second writes the files from the spool. A
   * resumed 100,000-item run otherwise holds the 75,000 rows written before
   * its kill at its first append. Holding the manifest lock. Returns
   * whether `extra` replaced a row on disk.
   */
  private rewriteFromDisk(extra?: ManifestRow): boolean {
    removeDeadWritersTemps(spoolOf(this.outputDir));
    const spool = new RowSpool(this.outputDir);
    try {
      const once = new RowsOnce();
      const names = new Set<string>();
      const digests = new Map<number, number>();
      const extraKey = extra && manifestRowKey(extra);
      let replaced = false;
      for (const row of rowsThen(this.outputDir, extra)) {
        const key = manifestRowKey(row);
        if (row !== extra && key === extraKey) replaced = true;
        once.see(row);
        addVarNames(names, row);
        digests.set(hash52(key), hash52(JSON.stringify(row)));
        spool.add(row);
      }
      this.replaceFiles(once.once(spool.rows()), names, digests);
      return replaced;
    } finally {
      spool.dispose();
    }
  }

  /** Whether both files are still the ones this writer last wrote. */
  private unchangedOnDisk(): boolean {
    if (!this.written) return false;
    try {
      return (
        statSync(path.join(this.outputDir, MANIFEST_JSONL)).ino === this.written.jsonl &&
        statSync(path.join(this.outputDir, MANIFEST_CSV)).ino === this.written.csv
      );
    } catch {
      return false;
    }
  }

  /**
   * Replaces the manifest of `outputDir` (a rebuild of one job's rows from
   * the journal), holding the manifest lock from the read of the rows on disk
   * to the files' replacement, so another process's change in between is not
   * lost. `rows` is called under the lock with a reader of the rows on disk
   * (those it says the rebuild writes anew only hold their place:
   * `readManifestAround`) and gives
   * the rows kept as they are (`before` and `after`: other jobs' in a shared
   * folder) and the job's rows (`own`), listed in run order (oldest run
   * first) and marked `current` here (`CurrentRule`, with the items the job
   * file describes now when known), without `open`'s repair pass and
   * without holding them: `own` is iterated once into a spool on disk
   * (row-spool.ts: the CSV header and the marks need every row first), then
   * each row is read back, checked and written, and
   * handed to `onRow` (the report's rows come from the same pass). Both
   * files stay atomic.
   */
  static replace(
    outputDir: string,
    rows: (
      onDisk: (rebuilt?: (row: RawRowOwner) => boolean) => (ManifestRow | undefined)[],
    ) => FolderRows,
    options: {
      /** Each row written, checked (the report's rows come from the same pass). */
      readonly onRow?: (row: ManifestRow) => void;
      /** The items the job file describes now (which rows are retired). */
      readonly described?: DescribedItems | undefined;
      /** Told of a wait for another process's change of the manifest. */
      readonly logger?: Logger | undefined;
    } = {},
  ): void {
    const { onRow, described } = options;
    const dir = path.resolve(outputDir);
    makeFolderSync(dir);
    withManifestLock(
      dir,
      () => {
        // Once a run, under the lock: what writers killed mid-rewrite left.
        for (const file of [MANIFEST_JSONL, MANIFEST_CSV])
          removeDeadWritersTemps(path.join(dir, file));
        removeDeadWritersTemps(spoolOf(dir));
        const folder = rows((rebuilt = () => false) => readManifestAround(dir, rebuilt));
        const spool = new RowSpool(dir);
        try {
          writeManifestFiles(dir, ...checkedFolderRows(folder, spool, onRow, described));
        } finally {
          spool.dispose();
        }
      },
      options.logger,
    );
  }

  /** The rows currently in the manifest, in file order (read from it). */
  rows(): ManifestRow[] {
    return readManifest(this.outputDir);
  }

  /**
   * Records one row (validated). A row identical to the one already recorded
   * for its key is skipped; a different one replaces it (both files rewritten
   * atomically: rare, so the append path stays cheap).
   */
  append(input: ManifestRow): AppendResult {
    const row = checkedRow(input);
    return this.locked(() => this.appendLocked(row));
  }

  private appendLocked(row: ManifestRow): AppendResult {
    this.load();
    const id = hash52(manifestRowKey(row));
    const json = JSON.stringify(row);
    const digest = hash52(json);
    const previous = this.digests.get(id);
    if (previous === digest) return 'unchanged';
    const newColumn = Object.keys(row.vars ?? {}).some((name) => !this.csvVars.has(name));
    if (previous !== undefined || newColumn) {
      // The file holds every recorded row (each append is written at once):
      // the row goes after them, and replaces its key's row in its place.
      return this.rewriteFromDisk(row) ? 'replaced' : 'appended';
    }
    this.digests.set(id, digest);
    const [jsonl, csv] = this.handles();
    // A process killed mid-line (another job's) leaves a torn last line:
    // this row starts on a line of its own.
    endLine(jsonl, '\n');
    endLine(csv, '\r\n');
    writeSync(jsonl, `${json}\n`);
    fsyncSync(jsonl);
    writeSync(csv, csvLine(this.csvColumns.map((c) => c.cell(row))));
    fsyncSync(csv);
    return 'appended';
  }

  /** Replaces the whole manifest with `rows` (e.g. rebuilt from the journal), atomically. */
  rewrite(rows: readonly ManifestRow[]): void {
    const checked = rows.map(checkedRow);
    this.locked(() => this.rewriteFiles(checked));
  }

  private locked<T>(change: () => T): T {
    return withManifestLock(this.outputDir, change, this.logger);
  }

  /**
   * Starts reading the rows on disk in slices between the process's other
   * work, for a writer that is about to append (a run): its first append
   * takes them when both files are still as read, else reads them again.
   */
  readAhead(): void {
    if (this.loaded || this.prefetch) return;
    this.prefetch = prefetchAsWritten(this.outputDir, () => this.closed || this.loaded)
      .then((rows) => {
        if (!this.loaded) this.prefetched = rows;
      })
      // Read again, holding the lock, at the first append.
      .catch(() => undefined);
  }

  /**
   * Resolves once the rows on disk were read ahead (`readAhead`): an append
   * before then reads them in one block. Never rejects.
   */
  ready(): Promise<void> {
    return this.prefetch ?? Promise.resolve();
  }

  close(): void {
    this.closed = true;
    this.prefetched = undefined;
    this.closeHandles();
  }

  /** Writes checked `rows` (a later row of a key replaces an earlier one, in its place). */
  private rewriteFiles(checked: readonly ManifestRow[]): void {
    const byKey = new Map<string, ManifestRow>();
    for (const row of checked) byKey.set(manifestRowKey(row), row);
    const names = new Set<string>();
    const digests = new Map<number, number>();
    for (const [key, row] of byKey) {
      addVarNames(names, row);
      digests.set(hash52(key), hash52(JSON.stringify(row)));
    }
    this.replaceFiles(byKey.values(), names, digests);
  }

  /**
   * Replaces both files with checked `rows`, one per key, whose template
   * variables are `names` and whose digests are `digests`.
   */
  private replaceFiles(
    rows: Iterable<ManifestRow>,
    names: Set<string>,
    digests: Map<number, number>,
  ): void {
    this.closeHandles();
    writeManifestFiles(this.outputDir, rows, csvColumnsOf(names));
    this.know({ names, digests });
  }

  /** Takes `rows` as what both files on disk hold now (holding the manifest lock). */
  private know(rows: WrittenRows): void {
    this.closeHandles();
    this.loaded = true;
    this.digests = rows.digests;
    this.csvColumns = csvColumnsOf(rows.names);
    this.csvVars = rows.names;
    const [jsonl, csv] = this.handles();
    this.written = { jsonl: fstatSync(jsonl).ino, csv: fstatSync(csv).ino };
  }

  private handles(): [number, number] {
    // Read and append: `endLine` looks at the last byte.
    this.jsonlFd ??= openSync(path.join(this.outputDir, MANIFEST_JSONL), 'a+');
    this.csvFd ??= openSync(path.join(this.outputDir, MANIFEST_CSV), 'a+');
    return [this.jsonlFd, this.csvFd];
  }

  private closeHandles(): void {
    for (const fd of [this.jsonlFd, this.csvFd]) if (fd !== undefined) closeSync(fd);
    this.jsonlFd = undefined;
    this.csvFd = undefined;
  }
}

/** Writes `eol` to the file open at `fd` unless it is empty or already ends a line. */
function endLine(fd: number, eol: string): void {
  const size = fstatSync(fd).size;
  if (size === 0) return;
  const last = Buffer.alloc(1);
  readSync(fd, last, 0, 1, size - 1);
  if (last[0] !== 0x0a) writeSync(fd, eol);
}

/** The rows on disk in file order, redacted, then `extra` (already checked) when given. */
function* rowsThen(outputDir: string, extra: ManifestRow | undefined): Generator<ManifestRow> {
  for (const row of manifestRowsInOrder(outputDir)) yield redactDeep(row);
  if (extra) yield extra;
}
