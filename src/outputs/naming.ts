/**
 * Output file naming: a per-step template such as `{step}/{name}-{n}.{ext}`
 * rendered into a relative path, then anchored inside the output folder. Two
 * independent guards: every value and every resulting segment is sanitised
 * (`renderOutputPath`), and the final absolute path is checked to be strictly
 * inside the folder, symlinks included (`resolveInside`).
 */
import { lstatSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { escapeRegExp } from '../shared/index.js';
import { OutputTemplateError, PathEscapeError } from './errors.js';
import { readableSegment, sanitizeSegment } from './sanitize.js';

/**
 * The template used when a step names none (also the job schema's default):
 * `{name}` reads like the item; the item key (an identity, with a hash) is
 * left to `{item}`. Names taken by another output get a short suffix.
 */
export const DEFAULT_OUTPUT_TEMPLATE = '{step}/{name}-{n}.{ext}';

/**
 * The fields a template can name besides the item's template variables.
 * `{step}` `{item}` `{n}` `{ext}` always mean the field; for the others a
 * template variable of the same name wins, as it always did in job files.
 */
export const TEMPLATE_FIELDS = [
  'step',
  'item',
  'n',
  'ext',
  'name',
  'model',
  'label',
  'generationId',
  'kind',
] as const;
export type TemplateField = (typeof TEMPLATE_FIELDS)[number];
const FIXED_FIELDS: readonly string[] = ['step', 'item', 'n', 'ext'];

type VarValue = string | number | boolean | null | undefined;

/**
 * Values for a template. `vars` (matrix/row values of the item) feed `{NAME}`;
 * `name` is the item's readable name (its values in job order), rendered as a
 * lower-case, dash-separated segment; absent, `{name}` falls back to `item`.
 */
export type OutputNameValues = Partial<Record<TemplateField, string | number>> & {
  readonly vars?: Readonly<Record<string, VarValue>>;
};

/** `{name}`; the name may be padded with spaces (`{ scene }`). */
const PLACEHOLDER = /\{([^{}]*)\}/g;

/**
 * The one parser of output templates (job `filename:`): the placeholder
 * names, trimmed, in order, or the problem (empty template, empty
 * placeholder, unmatched brace).
 */
function parseTemplate(template: string): { names: string[] } | { problem: string } {
  if (template.trim() === '') return { problem: 'output template is empty' };
  if (/[{}]/.test(template.replace(PLACEHOLDER, ''))) {
    return { problem: `output template "${template}" has an unmatched brace` };
  }
  const names = [...template.matchAll(PLACEHOLDER)].map((match) => (match[1] ?? '').trim());
  if (names.includes('')) return { problem: `output template "${template}" has an empty {}` };
  return { names };
}

/**
 * What is wrong with a template for an item with these template variables
 * (what `validate` reports), or undefined: a malformed template, or the first
 * placeholder that is neither a field nor a variable.
 */
export function outputTemplateProblem(
  template: string,
  varNames: Iterable<string> = [],
): string | undefined {
  return outputTemplateCheck(template, varNames)?.problem;
}

/** `outputTemplateProblem`, with the unknown placeholder's name when that is the problem. */
export function outputTemplateCheck(
  template: string,
  varNames: Iterable<string> = [],
): { readonly problem: string; readonly placeholder?: string } | undefined {
  const parsed = parseTemplate(template);
  if ('problem' in parsed) return parsed;
  const vars = new Set(varNames);
  const unknown = parsed.names.find(
    (name) => !vars.has(name) && !(TEMPLATE_FIELDS as readonly string[]).includes(name),
  );
  if (unknown === undefined) return undefined;
  return {
    problem:
      `output template "${template}" uses unknown placeholder {${unknown}}; ` +
      `use ${TEMPLATE_FIELDS.map((f) => `{${f}}`).join(' ')} or a template variable`,
    placeholder: unknown,
  };
}

/** Where `{name}` is written in a template's source text: group 1 is the name (for a caret). */
export function placeholderPattern(name: string): RegExp {
  return new RegExp(`\\{\\s*(${escapeRegExp(name)})\\s*\\}`, 'd');
}

/** The placeholder names of a well-formed template, in order; undefined when it is malformed. */
export function templatePlaceholders(template: string): string[] | undefined {
  const parsed = parseTemplate(template);
  return 'names' in parsed ? parsed.names : undefined;
}

/**
 * The folder, relative to the output folder, that every output of step
 * `step` goes in whatever the item: the template's leading folders that name
 * nothing but `{step}` ('' when there are none, or the template is malformed).
 */
export function fixedFolderOf(template: string, step: string): string {
  if (templatePlaceholders(template) === undefined) return '';
  const folders = template.split(/[/\\]+/).filter((part) => part !== '');
  const fixed: string[] = [];
  for (const folder of folders.slice(0, -1)) {
    const names = [...folder.matchAll(PLACEHOLDER)].map((match) => (match[1] ?? '').trim());
    if (names.some((name) => name !== 'step')) break;
    fixed.push(folder);
  }
  return fixed.length === 0 ? '' : renderOutputPath(fixed.join('/'), { step });
}

/** Throws {@link OutputTemplateError} with {@link outputTemplateProblem}'s message. */
export function validateOutputTemplate(template: string, varNames: Iterable<string> = []): void {
  const problem = outputTemplateProblem(template, varNames);
  if (problem) throw new OutputTemplateError(problem);
}

/**
 * Renders `template` into a relative POSIX path. Each substituted value is
 * sanitised on its own (so it cannot add a separator), then each segment of
 * the result is sanitised again (so literal text like `../` in the template
 * cannot climb either). Missing values render as `_`.
 */
export function renderOutputPath(template: string, values: OutputNameValues): string {
  validateOutputTemplate(template, Object.keys(values.vars ?? {}));
  const segments = template
    .split(/[/\\]+/)
    .filter((part) => part !== '')
    .map((part) =>
      sanitizeSegment(
        part.replace(PLACEHOLDER, (_m, name: string) => placeholderValue(name.trim(), values)),
      ),
    );
  if (segments.length === 0)
    throw new OutputTemplateError(`output template "${template}" is empty`);
  return segments.join('/');
}

function placeholderValue(name: string, values: OutputNameValues): string {
  const vars = values.vars ?? {};
  if (!FIXED_FIELDS.includes(name) && Object.hasOwn(vars, name)) {
    const value = vars[name];
    return value === undefined || value === null ? '_' : sanitizeSegment(String(value));
  }
  if (name === 'name') return readableSegment(String(values.name ?? values.item ?? ''));
  const raw = values[name as TemplateField];
  return raw === undefined || raw === null ? '_' : sanitizeSegment(String(raw));
}

/**
 * Anchors a relative path inside `outputDir` and returns the absolute path.
 * Throws {@link PathEscapeError} when the path is absolute (POSIX or Windows
 * form), contains NUL, resolves to the folder itself or outside it, or when
 * an existing parent is a symlink leading outside (checked with `realpath`),
 * or the target itself is an existing symlink.
 */
export function resolveInside(outputDir: string, relative: string): string {
  if (relative.includes('\0')) throw new PathEscapeError('output path contains a NUL character');
  if (path.isAbsolute(relative) || path.win32.isAbsolute(relative) || /^[a-z]:/i.test(relative)) {
    throw new PathEscapeError(`output path "${relative}" is absolute`);
  }
  const root = path.resolve(outputDir);
  const target = path.resolve(root, relative);
  if (!isStrictlyInside(root, target)) {
    throw new PathEscapeError(`output path "${relative}" leaves the output folder ${root}`);
  }
  const existing = deepestExisting(target, root);
  if (existing === target && lstatSync(target).isSymbolicLink()) {
    throw new PathEscapeError(`output path "${relative}" is a symbolic link`);
  }
  if (existing !== root) {
    const real = realpathOrUndefined(existing);
    if (!real || !isStrictlyInside(realRoot(root), real)) {
      throw new PathEscapeError(`output path "${relative}" goes through a link outside ${root}`);
    }
  }
  return target;
}

function isStrictlyInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel !== '' && !rel.startsWith(`..${path.sep}`) && rel !== '..' && !path.isAbsolute(rel);
}

/**
 * The output folder's realpath, taken once per folder: a run anchors every
 * output in one folder, and resolving it again per file was a large share of
 * a download's cost. Keeping the first answer is the stricter check: a folder
 * swapped for a link elsewhere after its first use no longer contains the
 * targets written through it. A folder not there yet is not remembered.
 */
const realRoots = new Map<string, string>();
function realRoot(root: string): string {
  const known = realRoots.get(root);
  if (known !== undefined) return known;
  const real = realpathOrUndefined(root);
  if (real === undefined) return root;
  realRoots.set(root, real);
  return real;
}

/** undefined for a dangling link (treated as leaving the folder). */
function realpathOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/** The target itself or its nearest existing ancestor (stops at `root`). */
function deepestExisting(target: string, root: string): string {
  let current = target;
  while (current !== root) {
    try {
      lstatSync(current);
      return current;
    } catch {
      const parent = path.dirname(current);
      if (parent === current) return root;
      current = parent;
    }
  }
  return root;
}

/** `resolveInside(outputDir, renderOutputPath(template, values))`, with both results. */
export function planOutputFile(
  outputDir: string,
  template: string,
  values: OutputNameValues,
): { relative: string; absolute: string } {
  const relative = renderOutputPath(template, values);
  return { relative, absolute: resolveInside(outputDir, relative) };
}
