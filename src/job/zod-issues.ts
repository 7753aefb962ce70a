/**
 * Turns zod issues of the job schema into positioned job issues with
 * messages a person can act on ("unknown key `promt` (did you mean
 * `prompt`?)" rather than "Unrecognized key").
 */
import type { z } from 'zod';
import { quote } from '../shared/index.js';
import type { JobIssue } from './issues.js';
import { NOTIFY_FORMATS } from './notify-targets.js';
import { INFLUENCER_KEYS, JOB_KEYS, STEP_KEYS } from './schema.js';
import { formatPath, issueAt, type JobSource, type KeyPath } from './source-map.js';

export function zodIssuesToJobIssues(
  source: JobSource,
  issues: readonly z.core.$ZodIssue[],
  value: unknown,
): JobIssue[] {
  const out: JobIssue[] = [];
  const guessed = misspeltKeys(issues);
  for (const issue of issues) {
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    // A misspelt required key is one mistake, reported at the misspelling.
    if (
      issue.code === 'invalid_type' &&
      valueAt(value, path) === undefined &&
      guessed.has(formatPath(path))
    )
      continue;
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        out.push(issueAt(source, [...path, key], unknownKeyMessage(path, key), { key: true }));
      }
      continue;
    }
    const picked = issue.code === 'invalid_union' ? shapeBranch(issue, value, path) : undefined;
    if (picked) {
      out.push(...zodIssuesToJobIssues(source, picked, value));
      continue;
    }
    out.push(issueAt(source, path, describe(issue, valueAt(value, path), path)));
  }
  return out;
}

/** The keys that unknown keys are taken for (`nme` for `name`), as paths. */
function misspeltKeys(issues: readonly z.core.$ZodIssue[]): ReadonlySet<string> {
  const guessed = new Set<string>();
  for (const issue of issues) {
    if (issue.code !== 'unrecognized_keys') continue;
    const path = issue.path.filter((p): p is string | number => typeof p !== 'symbol');
    for (const key of issue.keys) {
      const guess = closest(key, knownKeysAt(path));
      if (guess) guessed.add(formatPath([...path, guess]));
    }
  }
  return guessed;
}

/**
 * A value that may be written two ways (`from:` a step id or `{ step, pick }`,
 * `notify:` a URL or a list of entries, each a URL or `{ url, format }`):
 * when the value is a mapping or a list, the issues of the one way of that
 * shape, at their own keys (a misspelt `pick`, a `format` that is not one),
 * say more than "invalid value".
 */
function shapeBranch(
  issue: z.core.$ZodIssueInvalidUnion,
  value: unknown,
  path: KeyPath,
): z.core.$ZodIssue[] | undefined {
  const actual = valueAt(value, path);
  if (actual === null || typeof actual !== 'object') return undefined;
  const fitting = issue.errors.filter(
    (errors) => !errors.some((e) => e.code === 'invalid_type' && e.path.length === 0),
  );
  return fitting.length === 1
    ? fitting[0]?.map((e) => ({ ...e, path: [...path, ...e.path] }))
    : undefined;
}

function describe(issue: z.core.$ZodIssue, actual: unknown, path: KeyPath): string {
  const last = path[path.length - 1];
  switch (issue.code) {
    case 'invalid_type':
      if (actual === undefined) return `missing required key \`${String(last)}\``;
      if (path[0] === 'tags' && (typeof actual === 'number' || typeof actual === 'boolean'))
        return `must be text, got ${show(actual)}: quote it ("${String(actual)}") so it reads back as written`;
      return `expected ${article(issue.expected)}, got ${show(actual)}`;
    case 'invalid_union':
      if (last === 'from')
        return `must be a step id, or a mapping \`{ step: <id>, pick: [...] }\`, got ${show(actual)}`;
      if (last === 'images')
        return `must be an upload set id or a list of 1-20 asset URLs, got ${show(actual)}`;
      if (last === 'notify')
        return `must be an http(s) URL or a list of them (each a URL or \`{ url: URL, format: ${NOTIFY_FORMATS.join('|')} }\`), got ${show(actual)}`;
      if (path[0] === 'notify')
        return `must be an http(s) URL or a mapping \`{ url: URL, format: ${NOTIFY_FORMATS.join('|')} }\`, got ${show(actual)}`;
      return `invalid value ${show(actual)}`;
    case 'too_small':
      if (issue.origin === 'array')
        return `needs at least ${issue.minimum} entr${issue.minimum === 1 ? 'y' : 'ies'}`;
      if (issue.origin === 'string') return `must not be shorter than ${issue.minimum} characters`;
      return `must be at least ${issue.minimum}, got ${show(actual)}`;
    case 'too_big':
      if (issue.origin === 'array') return `must have at most ${issue.maximum} entries`;
      if (issue.origin === 'string') return `must not be longer than ${issue.maximum} characters`;
      return `must be at most ${issue.maximum}, got ${show(actual)}`;
    case 'invalid_value':
      if (issue.message && !issue.message.startsWith('Invalid')) return issue.message;
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(', ')}, got ${show(actual)}`;
    case 'invalid_format':
      if (issue.message && !issue.message.startsWith('Invalid')) return issue.message;
      return `must be a valid ${issue.format}, got ${show(actual)}`;
    case 'invalid_key':
      // A record's key (an upload set, influencer or tag name) that is not a slug.
      return `name ${show(last)} ${issue.issues[0]?.message ?? 'is not valid'}`;
    case 'not_multiple_of':
      return `must be a multiple of ${String(issue.divisor)}, got ${show(actual)}`;
    default:
      return issue.message;
  }
}

function article(expected: string): string {
  const noun = expected === 'object' ? 'mapping' : expected === 'array' ? 'list' : expected;
  return /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
}

/** A value for a message: short, typed, never multi-line, redacted (`quote`). */
export function show(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return typeof value === 'string' ? quote(value) : String(value);
}

function valueAt(root: unknown, path: KeyPath): unknown {
  let node = root;
  for (const segment of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<string | number, unknown>)[segment];
  }
  return node;
}

function knownKeysAt(path: KeyPath): readonly string[] {
  if (path.length === 0) return JOB_KEYS;
  if (path.length === 2 && path[0] === 'generations') return STEP_KEYS;
  if (path.length === 2 && path[0] === 'influencers') return INFLUENCER_KEYS;
  if (path.length === 2 && path[0] === 'uploads') return ['files'];
  if (path.length === 3 && path[0] === 'generations' && path[2] === 'from') return ['step', 'pick'];
  return [];
}

function unknownKeyMessage(path: KeyPath, key: string): string {
  const known = knownKeysAt(path);
  const guess = closest(key, known);
  const hint = guess
    ? ` (did you mean \`${guess}\`?)`
    : known.length
      ? ` (known keys: ${known.join(', ')})`
      : '';
  return `unknown key \`${key}\`${hint}`;
}

/** The known word within edit distance 2 of `word`, if any. */
export function closest(word: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const candidate of known) {
    const d = editDistance(word.toLowerCase(), candidate.toLowerCase());
    if (d < bestDistance) {
      best = candidate;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 2) return 3;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      row[j] = Math.min((prev[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, (prev[j - 1] ?? 0) + cost);
    }
    prev = row;
  }
  return prev[b.length] ?? 0;
}
