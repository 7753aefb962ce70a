/**
 * What a manifest writer must know of the rows on disk before its first
 * append (each row's digest by key, the template variables that head the
 * CSV), read without rewriting either file when both are exactly as a
 * writer leaves them. A resumed 100,000-item run appends to the 75,000 rows
 * written before its kill: rewriting them (a spool and two files, fsynced)
 * is most of the first append's time (docs/benchmarks.md, "The manifest at
 * a resume").
 */
import { closeSync, openSync, readSync, statSync } from 'node:fs';
import path from 'node:path';
import { hash52, redactDeep } from '../shared/index.js';
import { fileLines } from './file-lines.js';
import { csvHeadOf, csvRecordOf, MANIFEST_CSV, MANIFEST_JSONL } from './manifest-files.js';
import {
  addVarNames,
  csvColumnsOf,
  type ManifestRow,
  ManifestRowSchema,
  manifestRowKey,
} from './manifest-row.js';

/** What a writer knows of the rows on disk (see ManifestWriter's `digests`). */
export interface WrittenRows {
  readonly digests: Map<number, number>;
  readonly names: Set<string>;
}

/**
 * The rows of `outputDir`'s manifest when both files are as a writer leaves
 * them, else undefined (the caller rewrites them): every JSONL line is a
 * valid row written as the writer writes it (redacted, `JSON.stringify`),
 * no key twice; the CSV is not older than the JSONL (a kill between the two
 * files of a rewrite), starts with the header of those rows' variables and
 * ends with the last row's line (a kill between the two writes of an
 * append). A line torn by a kill is not a row: undefined.
 */
export function readAsWritten(outputDir: string): WrittenRows | undefined {
  const reading = readingAsWritten(outputDir);
  for (;;) {
    const step = reading.next();
    if (step.done) return step.value;
  }
}

/** Lines read between two turns of the event loop by `prefetchAsWritten`. */
const LINES_PER_SLICE = 1000;

/** The size, inode and modification time of both files: equal stats, the same rows. */
export interface ManifestStat {
  readonly jsonl: readonly [number, number, number];
  readonly csv: readonly [number, number, number];
}

/** `ManifestStat` of `outputDir`'s manifest; undefined when a file is missing. */
export function manifestStat(outputDir: string): ManifestStat | undefined {
  try {
    const of = (file: string) => {
      const stat = statSync(path.join(outputDir, file));
      return [stat.size, stat.ino, stat.mtimeMs] as const;
    };
    return { jsonl: of(MANIFEST_JSONL), csv: of(MANIFEST_CSV) };
  } catch {
    return undefined;
  }
}

/** Whether `a` and `b` are the stat of the same two files, unchanged between them. */
export function sameStat(a: ManifestStat | undefined, b: ManifestStat | undefined): boolean {
  return (
    a !== undefined &&
    b !== undefined &&
    a.jsonl.every((value, i) => value === b.jsonl[i]) &&
    a.csv.every((value, i) => value === b.csv[i])
  );
}

/** What `prefetchAsWritten` read: the rows, and the files' stat they are the rows of. */
export interface PrefetchedRows {
  readonly rows: WrittenRows;
  readonly stat: ManifestStat;
}

/**
 * `readAsWritten` a slice of lines at a time, between the run's other work
 * (a resumed 100,000-item run's first create does not wait for the 75,000
 * rows before it), without the manifest lock: the rows hold while both
 * files' stat is the one they were read under (`sameStat`), which the
 * writer checks under the lock before taking them. Undefined when the files
 * changed during the read, are not as written, or `stopped` says so.
 */
export async function prefetchAsWritten(
  outputDir: string,
  stopped: () => boolean,
): Promise<PrefetchedRows | undefined> {
  const stat = manifestStat(outputDir);
  if (!stat) return undefined;
  const reading = readingAsWritten(outputDir);
  for (;;) {
    if (stopped()) {
      reading.return(undefined); // closes the file
      return undefined;
    }
    const step = reading.next();
    if (step.done) {
      const rows = step.value;
      return rows && sameStat(stat, manifestStat(outputDir)) ? { rows, stat } : undefined;
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** `readAsWritten`, pausing (a `yield`) every `LINES_PER_SLICE` lines. */
function* readingAsWritten(outputDir: string): Generator<void, WrittenRows | undefined> {
  const jsonlFile = path.join(outputDir, MANIFEST_JSONL);
  const csvFile = path.join(outputDir, MANIFEST_CSV);
  let csvSize: number;
  try {
    const jsonl = statSync(jsonlFile);
    const csv = statSync(csvFile);
    if (csv.mtimeMs < jsonl.mtimeMs) return undefined;
    csvSize = csv.size;
  } catch {
    return undefined;
  }
  const digests = new Map<number, number>();
  const names = new Set<string>();
  let last: ManifestRow | undefined;
  let lines = 0;
  for (const line of fileLines(jsonlFile)) {
    if (++lines % LINES_PER_SLICE === 0) yield;
    if (line === '') continue;
    let row: ManifestRow;
    try {
      row = redactDeep(ManifestRowSchema.parse(JSON.parse(line)));
    } catch {
      return undefined;
    }
    const json = JSON.stringify(row);
    const id = hash52(manifestRowKey(row));
    if (json !== line || digests.has(id)) return undefined;
    digests.set(id, hash52(json));
    addVarNames(names, row);
    last = row;
  }
  const columns = csvColumnsOf(names);
  const head = Buffer.from(csvHeadOf(columns));
  const tail = Buffer.from(last ? csvRecordOf(columns, last) : '');
  if (last ? csvSize < head.length + tail.length : csvSize !== head.length) return undefined;
  const fd = openSync(csvFile, 'r');
  try {
    return bytesAt(fd, 0, head.length).equals(head) &&
      bytesAt(fd, csvSize - tail.length, tail.length).equals(tail)
      ? { digests, names }
      : undefined;
  } finally {
    closeSync(fd);
  }
}

function bytesAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  const read = readSync(fd, buffer, 0, length, position);
  return buffer.subarray(0, read);
}
