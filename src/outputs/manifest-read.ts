/**
 * Reading `manifest.jsonl` back, a megabyte at a time (file-lines.ts): its
 * rows (torn or foreign lines skipped), or only what a reader needs of them.
 */
import path from 'node:path';
import { RETIRED_REASON } from './current.js';
import { fileLineBytes, fileLines } from './file-lines.js';
import { MANIFEST_JSONL } from './manifest-files.js';
import { isRowOfJob, type ManifestRow, ManifestRowSchema, manifestRowKey } from './manifest-row.js';

/**
 * Reads `manifest.jsonl` of `outputDir` (a megabyte at a time), keeping the
 * rows `keep` accepts (all by default). Lines that do not parse or validate
 * (a line torn by a crash mid-write) are skipped, each told to `onSkipped`
 * by its 1-based line number; duplicate keys keep the last.
 */
export function readManifest(
  outputDir: string,
  keep: (row: ManifestRow) => boolean = () => true,
  onSkipped?: (line: number) => void,
): ManifestRow[] {
  return readRows(outputDir, keep, onSkipped, () => false) as ManifestRow[];
}

/**
 * The rows of `manifest.jsonl` of `outputDir` in file order, each validated
 * as it is read and none held: a repeated key is given each time, torn or
 * foreign lines are skipped (as `readManifest`).
 */
export function* manifestRowsInOrder(outputDir: string): Generator<ManifestRow> {
  for (const line of fileLines(path.join(outputDir, MANIFEST_JSONL))) {
    const row = rowOfLine(line);
    if (row) yield row;
  }
}

/** The rows of a manifest's text kept elsewhere (a delivered one), as `manifestRowsInOrder`. */
export function manifestRowsOfText(text: string): ManifestRow[] {
  return text.split('\n').flatMap((line) => rowOfLine(line) ?? []);
}

/** A line's row; undefined for a blank, torn or foreign line (as readManifest skips them). */
function rowOfLine(line: string): ManifestRow | undefined {
  if (line.trim() === '') return undefined;
  try {
    return ManifestRowSchema.parse(JSON.parse(line));
  } catch {
    return undefined;
  }
}

/** What `readManifestAround` knows of a row before validating it: the fields as written. */
export interface RawRowOwner {
  readonly runId?: unknown;
  readonly job?: unknown;
}

/**
 * The rows on disk around those a rebuild writes anew (`rebuilt`, judged by
 * the row's `runId` and `job` as written): those are neither validated nor
 * held, an `undefined` stands in their place (a rebuild of 100,000 rows
 * would otherwise hold them all). Otherwise as `readManifest`.
 */
export function readManifestAround(
  outputDir: string,
  rebuilt: (row: RawRowOwner) => boolean,
): (ManifestRow | undefined)[] {
  return readRows(outputDir, () => true, undefined, rebuilt);
}

function readRows(
  outputDir: string,
  keep: (row: ManifestRow) => boolean,
  onSkipped: ((line: number) => void) | undefined,
  rebuilt: (row: RawRowOwner) => boolean,
): (ManifestRow | undefined)[] {
  // Its key only (for its place): the rebuild writes the row itself.
  const standIn = (raw: RawRowOwner) => (rebuilt(raw) ? undefined : READ);
  const rows = rowsByKey(outputDir, keep, onSkipped, standIn, standIn);
  return [...rows.values()];
}

/** What `standIn` returns for a line to be validated and kept as a row. */
const READ = Symbol('read the row');

/**
 * The rows of the manifest by key, in the order each key first appears
 * (duplicate keys keep the last). A line `standIn` gives a value for holds
 * its key's place with that value, neither validated nor held itself;
 * `ownerStandIn`, when given, judges a line by its start alone first
 * (`ownerOfLine`), without parsing it.
 */
function rowsByKey<T>(
  outputDir: string,
  keep: (row: ManifestRow) => boolean,
  onSkipped: ((line: number) => void) | undefined,
  standIn: (raw: RawRow) => T | typeof READ,
  ownerStandIn?: (owner: RawRowOwner & { readonly item: string }, line: Buffer) => T | typeof READ,
): Map<string, ManifestRow | T> {
  const byKey = new Map<string, ManifestRow | T>();
  let number = 0;
  // Bytes: a line judged by its start is never decoded whole.
  for (const bytes of fileLineBytes(path.join(outputDir, MANIFEST_JSONL))) {
    number += 1;
    const owner = ownerStandIn && ownerOfLine(bytes);
    const ownerStand = owner ? ownerStandIn(owner, bytes) : READ;
    if (owner && ownerStand !== READ) {
      byKey.set(manifestRowKey(owner), ownerStand);
      continue;
    }
    const line = bytes.toString('utf8');
    if (line.trim() === '') continue;
    let row: ManifestRow;
    try {
      const raw: unknown = JSON.parse(line);
      const stand = typeof raw === 'object' && raw !== null ? standIn(raw) : READ;
      if (stand !== READ) {
        byKey.set(manifestRowKey(raw as Parameters<typeof manifestRowKey>[0]), stand);
        continue;
      }
      row = ManifestRowSchema.parse(raw);
    } catch {
      // torn or foreign line: the journal can rebuild it with `rewrite`
      onSkipped?.(number);
      continue;
    }
    if (keep(row)) byKey.set(manifestRowKey(row), row);
  }
  return byKey;
}

/** A manifest line as written, before it is validated: what `covered` judges it by. */
export interface RawRow extends RawRowOwner {
  readonly item?: unknown;
  readonly step?: unknown;
  readonly n?: unknown;
  readonly influencerId?: unknown;
}

/**
 * `readManifest` for a reader that already knows the outcome of some rows:
 * a line `covered` accepts (judged as written) is neither validated nor
 * held. Returns the other rows kept, in `readManifest`'s order, and, of
 * their items, those whose last row in that order is a covered one (their
 * other rows are older than what the reader knows).
 */
export function readManifestUncovered(
  outputDir: string,
  keep: (row: ManifestRow) => boolean,
  covered: (raw: RawRow) => raw is RawRow & { readonly item: string },
  onSkipped?: (line: number) => void,
): { readonly rows: ManifestRow[]; readonly coveredLast: ReadonlySet<string> } {
  // A covered line holds its place by its item alone. Judged by its start
  // when the line names no influencer (a field its start does not show).
  const byKey = rowsByKey(
    outputDir,
    keep,
    onSkipped,
    (raw) => (covered(raw) ? raw.item : READ),
    (owner, line) => (!line.includes(INFLUENCER_FIELD) && covered(owner) ? owner.item : READ),
  );
  const rows: ManifestRow[] = [];
  for (const entry of byKey.values()) if (typeof entry !== 'string') rows.push(entry);
  // Only the items of `rows` are asked about: a current journal covers every
  // line and leaves no row, and the question then costs nothing.
  const last = new Map<string, boolean>(rows.map((row) => [row.item, false]));
  if (last.size > 0) {
    for (const entry of byKey.values()) {
      const item = typeof entry === 'string' ? entry : entry.item;
      if (last.has(item)) last.set(item, typeof entry === 'string');
    }
  }
  const coveredLast = new Set<string>();
  for (const [item, isCovered] of last) if (isCovered) coveredLast.add(item);
  return { rows, coveredLast };
}

/** How a row naming an influencer writes it. */
const INFLUENCER_FIELD = Buffer.from('"influencerId":');

/** A JSON string literal. */
const TEXT = '"(?:[^"\\\\]|\\\\.)*"';
/** How the writer starts a row (`ManifestRowSchema`'s order): job, run, step, item, then n when it has one. */
const ROW_START = new RegExp(
  `^\\{"job":(${TEXT}),"runId":(${TEXT}),"step":(${TEXT}),"item":(${TEXT})(?:,"n":(\\d+))?[,}]`,
);

/** A row's start is within this many bytes of a line, unless its names are long (then the whole line is read). */
const ROW_START_BYTES = 512;
const CLOSING_BRACE = 0x7d;

/**
 * The owner and key of a whole line the writer wrote, read from its start
 * alone (a rebuild only places the rows it writes anew: parsing each of
 * 100,000 of them whole is most of reading the file); undefined for any
 * other line, which is parsed whole.
 */
function ownerOfLine(
  line: Buffer,
): (RawRowOwner & Parameters<typeof manifestRowKey>[0]) | undefined {
  if (line.at(-1) !== CLOSING_BRACE) return undefined;
  const m =
    ROW_START.exec(line.toString('utf8', 0, ROW_START_BYTES)) ??
    (line.length > ROW_START_BYTES ? ROW_START.exec(line.toString('utf8')) : null);
  if (!m) return undefined;
  const [, job, runId, step, item, n] = m;
  if (!job || !runId || !step || !item) return undefined;
  return {
    job: JSON.parse(job) as string,
    runId: JSON.parse(runId) as string,
    step: JSON.parse(step) as string,
    item: JSON.parse(item) as string,
    ...(n === undefined ? {} : { n: Number(n) }),
  };
}

/**
 * The items whose rows of job `jobName` in `outputDir`'s manifest are marked
 * removed from the job (`RETIRED_REASON`; a row naming no job, from an older
 * manifest, counts as the job's). Only lines naming the reason are parsed: a
 * reader without the job file (`status RUN_ID`) asks this of a folder of
 * 100,000 rows, nearly all of them current.
 */
export function retiredItemsOnDisk(outputDir: string, jobName: string): Set<string> {
  const retired = new Set<string>();
  const marker = JSON.stringify(RETIRED_REASON);
  for (const line of fileLines(path.join(outputDir, MANIFEST_JSONL))) {
    if (!line.includes(marker)) continue;
    try {
      const row = ManifestRowSchema.parse(JSON.parse(line));
      if (isRowOfJob(row, jobName) && row.currentReason === RETIRED_REASON) retired.add(row.item);
    } catch {
      // torn or foreign line: as readManifest
    }
  }
  return retired;
}
