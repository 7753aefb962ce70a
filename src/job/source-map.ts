/**
 * YAML parsing that keeps source positions, so every problem found later (by
 * the schema, the file checks or the model contracts) can point at the exact
 * node in the job file.
 */
import { type Document, isMap, isPair, isScalar, isSeq, LineCounter, parseDocument } from 'yaml';
import type { JobIssue } from './issues.js';

export type KeyPath = readonly (string | number)[];

export interface JobSource {
  /** Path shown in messages. */
  readonly file: string;
  readonly text: string;
  readonly doc: Document;
  readonly lineCounter: LineCounter;
}

export interface ParsedYaml {
  readonly source: JobSource;
  /** The plain JS value; undefined when the text could not be parsed. */
  readonly value: unknown;
  readonly issues: JobIssue[];
}

/** Aliases may expand exponentially ("billion laughs"): cap them. */
const MAX_ALIAS_COUNT = 100;

export function parseJobYaml(file: string, text: string): ParsedYaml {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  const source: JobSource = { file, text, doc, lineCounter };
  const issues: JobIssue[] = [];
  const at = (offset: number, severity: 'error' | 'warning', message: string, end?: number) => {
    const { line, col } = lineCounter.linePos(Math.max(0, Math.min(offset, text.length)));
    const length = end !== undefined && end > offset ? end - offset : 1;
    issues.push({ file, line, col, path: '', message, severity, length });
  };
  for (const error of doc.errors)
    at(error.pos[0], 'error', `YAML syntax: ${firstLine(error.message)}`, error.pos[1]);
  for (const warning of doc.warnings)
    at(warning.pos[0], 'warning', `YAML: ${firstLine(warning.message)}`);
  if (doc.errors.length > 0) return { source, value: undefined, issues };
  try {
    return { source, value: doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT }), issues };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    at(0, 'error', `YAML: ${firstLine(message)}`);
    return { source, value: undefined, issues };
  }
}

function firstLine(message: string): string {
  return message.split('\n')[0]?.trim() ?? message;
}

export interface Located {
  readonly line: number;
  readonly col: number;
  readonly length: number;
}

export interface LocateOptions {
  /** Locate the last segment's key instead of its value (unknown keys, a field missing from a map). */
  readonly key?: boolean;
  /**
   * A part of the value to point at: the first match of this pattern's
   * group 1 in the value's source text (flag `d`, not `g`). The source
   * text is searched, not the parsed value, so quotes, escapes and block
   * scalars keep their columns; no match points at the whole value.
   */
  readonly within?: RegExp;
}

/**
 * The position of the node at `path`, or of its nearest existing ancestor
 * (a missing key is reported where its map is). With `key: true` the last
 * segment's key is located instead of its value (for unknown keys).
 */
export function locate(source: JobSource, path: KeyPath, options: LocateOptions = {}): Located {
  const found = locateNode(source, path, options);
  const part =
    options.within && found.reached ? partOf(source.text, found.range, options.within) : undefined;
  const start = part?.[0] ?? found.range?.[0] ?? 0;
  const end = part?.[1] ?? found.range?.[1] ?? start + 1;
  const { line, col } = source.lineCounter.linePos(start);
  return { line, col, length: Math.max(1, end - start) };
}

/** Where group 1 of `pattern` (a `d`, non-`g` pattern) first matches inside `range` of `text`. */
function partOf(
  text: string,
  range: readonly number[] | undefined,
  pattern: RegExp,
): readonly [number, number] | undefined {
  const [start, end] = range ?? [];
  if (start === undefined || end === undefined) return undefined;
  const group = pattern.exec(text.slice(start, end))?.indices?.[1];
  return group ? [start + group[0], start + group[1]] : undefined;
}

/** The range of the node at `path` (or its nearest ancestor), and whether `path` was reached. */
function locateNode(
  source: JobSource,
  path: KeyPath,
  options: LocateOptions,
): { range: readonly number[] | undefined; reached: boolean } {
  let node: unknown = source.doc.contents;
  let range: readonly number[] | undefined = rangeOf(node);
  for (let i = 0; i < path.length; i++) {
    const segment = path[i];
    const last = i === path.length - 1;
    if (isMap(node)) {
      const pair = node.items.find(
        (p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(segment),
      );
      if (!pair) return { range, reached: false };
      if (last && options.key) return { range: rangeOf(pair.key) ?? range, reached: true };
      // A key with an empty value (`input:`) has no value node: point at the key.
      node = pair.value;
      range = rangeOf(pair.value) ?? rangeOf(pair.key) ?? range;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item = node.items[segment];
      if (item === undefined) return { range, reached: false };
      node = item;
      range = rangeOf(item) ?? range;
    } else {
      return { range, reached: false };
    }
  }
  return { range, reached: true };
}

function rangeOf(node: unknown): readonly number[] | undefined {
  if (node && typeof node === 'object' && 'range' in node) {
    const range = (node as { range?: readonly number[] | null }).range;
    return range ?? undefined;
  }
  return undefined;
}

/** `generations[1].input.prompt` */
export function formatPath(path: KeyPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (/^[A-Za-z_$][\w$-]*$/.test(segment)) out += out ? `.${segment}` : segment;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

/** An issue at `path` of the job file. */
export function issueAt(
  source: JobSource,
  path: KeyPath,
  message: string,
  options: LocateOptions & { severity?: 'error' | 'warning' } = {},
): JobIssue {
  const { line, col, length } = locate(source, path, options);
  return {
    file: source.file,
    line,
    col,
    path: formatPath(path),
    message,
    severity: options.severity ?? 'error',
    length,
  };
}

/** An issue at `path` of a loaded job's file (for checks made after loading). */
export function jobIssueAt(
  job: { readonly source: JobSource },
  path: KeyPath,
  message: string,
  options: LocateOptions & { severity?: 'error' | 'warning' } = {},
): JobIssue {
  return issueAt(job.source, path, message, options);
}
