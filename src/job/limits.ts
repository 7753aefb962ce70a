/**
 * Ceilings on what a job file may ask for: how many items it
 * expands into, how large the job and rows files are, and where its upload
 * globs may look. Each is checked BEFORE the work it guards (counting a
 * matrix's product instead of building it, `fstat` before reading), so a
 * hostile or mistyped job fails fast with exit 2 instead of filling the heap
 * or the disk. See docs/job-files.md ("Limits").
 */
import { closeSync, constants, fstatSync, openSync, readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';

export interface JobLimits {
  /** Items (generations) one job may expand into, all steps together (`--max-items`). */
  readonly maxItems: number;
  /** Largest job file read, in bytes. */
  readonly maxJobFileBytes: number;
  /** Largest rows file read, in bytes. */
  readonly maxRowsFileBytes: number;
  /** Upload globs may be absolute or climb out of the job's folder (`--allow-outside-job-folder`). */
  readonly allowOutsideJobFolder: boolean;
}

/**
 * 250,000 items: two and a half times the product's largest campaigns
 * (100,000 rows), and within what checking a job file may cost in time and
 * memory; far larger jobs cost more to `validate` than that (figures:
 * docs/benchmarks.md, "Figures behind choices in the code").
 * 1 MB of YAML is thousands of steps. 64 MB of rows is 100,000 rows of 640
 * bytes; the whole file is read before its rows are counted, so this bounds
 * the memory a rows file can take.
 */
export const DEFAULT_JOB_LIMITS: JobLimits = Object.freeze({
  maxItems: 250_000,
  maxJobFileBytes: 2 ** 20,
  maxRowsFileBytes: 64 * 2 ** 20,
  allowOutsideJobFolder: false,
});

export function jobLimits(overrides: Partial<JobLimits> = {}): JobLimits {
  return { ...DEFAULT_JOB_LIMITS, ...overrides };
}

/** How a user raises the item ceiling, appended to the message. */
export const RAISE_MAX_ITEMS = 'raise the ceiling with `--max-items N`';

/**
 * Why a step may not expand: it would take the job over `maxItems`. `amount`
 * says how the count is known: "up to" (a matrix before `exclude`) or "more
 * than" (rows read until the ceiling was passed).
 */
export function itemCeilingMessage(
  stepId: string,
  amount: 'up to' | 'more than',
  items: number,
  before: number,
  max: number,
): string {
  const earlier = before > 0 ? ` (after ${formatCount(before)} items of earlier steps)` : '';
  return `step \`${stepId}\` expands to ${amount} ${formatCount(items)} items${earlier}; a job may have at most ${formatCount(max)} items: ${RAISE_MAX_ITEMS}`;
}

/** `a * b` that saturates at +Infinity instead of losing precision silently. */
export function productOf(factors: readonly number[]): number {
  let product = 1;
  for (const factor of factors) {
    product *= factor;
    if (product > Number.MAX_SAFE_INTEGER) return Number.POSITIVE_INFINITY;
  }
  return product;
}

/** A count for messages: `12,000,000`, or "more than 9,007,199,254,740,991". */
export function formatCount(count: number): string {
  return Number.isFinite(count)
    ? count.toLocaleString('en-US')
    : `more than ${Number.MAX_SAFE_INTEGER.toLocaleString('en-US')}`;
}

/**
 * The most combinations a matrix can have, without expanding it: the product
 * of its axes (exclusions only remove) plus one per `include` entry (each adds
 * at most one combination of its own).
 */
export function matrixCombinationBound(
  matrix: Readonly<Record<string, unknown>> | undefined,
): number {
  if (!matrix) return 1;
  const axes: number[] = [];
  for (const [name, values] of Object.entries(matrix)) {
    if (name !== 'include' && name !== 'exclude' && Array.isArray(values)) axes.push(values.length);
  }
  const include = Array.isArray(matrix.include) ? matrix.include.length : 0;
  return (axes.length === 0 ? 0 : productOf(axes)) + include;
}

/** Why `path` (already opened as `fd`) may not be read as an input file, if it may not. */
function notReadable(fd: number, kind: string, maxBytes: number): string | undefined {
  const stat = fstatSync(fd);
  if (stat.isDirectory()) return `is a directory, not a ${kind}`;
  if (stat.isFIFO()) return `is a pipe (FIFO), not a regular file`;
  if (stat.isCharacterDevice() || stat.isBlockDevice()) return 'is a device, not a regular file';
  if (!stat.isFile()) return 'is not a regular file';
  if (stat.size > maxBytes)
    return `is ${formatBytes(stat.size)}; a ${kind} may be at most ${formatBytes(maxBytes)}`;
  return undefined;
}

/** An input file that is not a regular file or is over its ceiling (exit 2 via the caller). */
export class InputFileRefused extends Error {
  readonly code = 'input_file_refused';
}

/**
 * Reads a job or rows file's bytes only if it is a regular file under
 * `maxBytes`. Opened non-blocking so a FIFO never hangs the open; `fstat` of
 * the opened descriptor, so the file checked is the file read. Errors from
 * `open` (ENOENT, EACCES) are thrown as they are; refusals as
 * {@link InputFileRefused} with a message to follow the file's name.
 */
export function readRegularFile(path: string, kind: string, maxBytes: number): Buffer {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const problem = notReadable(fd, kind, maxBytes);
    if (problem) throw new InputFileRefused(problem);
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * Why an upload glob may not be expanded, if it may not: an absolute pattern
 * (`/**\/*.png` scans the whole disk) or one climbing out with `..`.
 */
export function globRootProblem(pattern: string, limits: JobLimits): string | undefined {
  if (limits.allowOutsideJobFolder) return undefined;
  const posix = pattern.replaceAll('\\', '/');
  const outside = isAbsolute(pattern) || /^[A-Za-z]:/.test(posix) || posix.startsWith('~');
  const climbs = posix.split('/').includes('..');
  if (!outside && !climbs) return undefined;
  return `glob ${JSON.stringify(pattern)} reaches outside the job's folder (${outside ? 'absolute path' : '`..`'}): move the files beside the job file, or allow it with \`--allow-outside-job-folder\``;
}

function formatBytes(bytes: number): string {
  if (bytes >= 2 ** 20) return `${(bytes / 2 ** 20).toFixed(1)} MB`;
  if (bytes >= 2 ** 10) return `${(bytes / 2 ** 10).toFixed(1)} KB`;
  return `${bytes} bytes`;
}
