/**
 * Problems found in a job file, each pinned to a position in the file, and
 * the error that carries all of them at once. Every check (schema, files,
 * templates, model contracts) reports through `JobIssue`, so the user gets
 * one sorted list instead of fixing mistakes one run at a time.
 */
import { EXIT, IbatchError, redact, redactDeep } from '../shared/index.js';

export interface JobIssue {
  /** Job file path as given (relative paths stay relative for readability). */
  readonly file: string;
  /** 1-based line and column of the offending node (or its nearest parent). */
  readonly line: number;
  readonly col: number;
  /** Dotted key path, e.g. `generations[1].input.duration`; empty for the root. */
  readonly path: string;
  readonly message: string;
  /** `error` fails validation; `warning` is printed and passes. */
  readonly severity: 'error' | 'warning';
  /** Length of the source span to underline (>= 1). */
  readonly length?: number;
}

export function compareIssues(a: JobIssue, b: JobIssue): number {
  return (
    a.file.localeCompare(b.file) ||
    a.line - b.line ||
    a.col - b.col ||
    a.path.localeCompare(b.path) ||
    a.message.localeCompare(b.message)
  );
}

/** Sorts and removes exact duplicates (the same mistake seen by many items). */
export function sortIssues(issues: readonly JobIssue[]): JobIssue[] {
  const seen = new Set<string>();
  const unique: JobIssue[] = [];
  for (const issue of [...issues].sort(compareIssues)) {
    const id = `${issue.severity}\0${issue.line}\0${issue.col}\0${issue.path}\0${issue.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    unique.push(issue);
  }
  return unique;
}

export interface FormatOptions {
  /** Adds a caret excerpt under each issue (on a TTY). */
  readonly excerpt?: boolean;
  /** The job file's text, needed for the excerpt. */
  readonly source?: string;
}

/** `file:line:col  path  message`, one per line, sorted. */
export function formatIssues(issues: readonly JobIssue[], options: FormatOptions = {}): string {
  const lines = options.source?.split(/\r?\n/);
  return sortIssues(issues)
    .map((issue) => {
      const tag = issue.severity === 'warning' ? 'warning: ' : '';
      const head = `${issue.file}:${issue.line}:${issue.col}  ${issue.path || '(root)'}  ${tag}${issue.message}`;
      if (!options.excerpt || !lines) return head;
      const text = lines[issue.line - 1];
      if (text === undefined) return head;
      const gutter = String(issue.line).length;
      const caretLength = Math.max(1, Math.min(issue.length ?? 1, text.length - issue.col + 1));
      return [
        head,
        `  ${String(issue.line)} | ${redact(text)}`,
        `  ${' '.repeat(gutter)} | ${' '.repeat(Math.max(0, issue.col - 1))}${'^'.repeat(caretLength)}`,
      ].join('\n');
    })
    .join('\n');
}

/**
 * The job file (or an input it names) is invalid. Nothing was sent to the
 * service except read-only model look-ups. Exit 2.
 */
export class JobFileError extends IbatchError {
  readonly issues: readonly JobIssue[];
  readonly source: string | undefined;

  constructor(issues: readonly JobIssue[], source?: string) {
    // Issues quote the file (a key, a value, an env file given by mistake):
    // whatever reaches them leaves redacted, whichever sink prints them.
    const sorted = redactDeep(sortIssues(issues));
    const errors = sorted.filter((issue) => issue.severity === 'error');
    const count = errors.length === 1 ? '1 problem' : `${errors.length} problems`;
    super('invalid_job', `invalid job file (${count}):\n${formatIssues(errors)}`, EXIT.invalid);
    this.issues = sorted;
    this.source = source;
  }
}

export function isJobFileError(error: unknown): error is JobFileError {
  return error instanceof JobFileError;
}
