/**
 * "Docs match the tool": every command, flag, output-name
 * placeholder and `IBATCH_*` variable that README.md and docs/*.md show a
 * person is one the tool accepts. The commander program is built in process
 * (`buildProgram`, what `bin/ibatch.js` runs), so a command's options are
 * its real options, hidden ones (old spellings) included.
 *
 * Extraction rules (deliberately simple):
 * 1. Text is read only from code: `code spans` (which may run over lines)
 *    and the lines of fenced code blocks (not indented ones). Prose is never
 *    parsed, except for rule 4.
 * 2. Invocations: `ibatch` (or `bin/ibatch.js`, `npx ibatch`) at the start of
 *    a span or line, after a shell prompt `$ `, a separator (` | ` `;`
 *    `&&`), `(` or a quote. The next word is the command (`validate|plan` means
 *    both; an upper-case word such as `COMMAND` means every command), then
 *    each `-x`/`--flag` up to the next separator or `#` comment is one of
 *    its flags. `ibatch` in the middle of a sentence (a quoted message) is
 *    not an invocation.
 * 3. A span that starts with a command name and then a flag (`run
 *    --max-spend`, `validate --offline`) is the command's flag.
 * 4. Prose claims of the form "`run` also takes `--a`, `--b`..." and
 *    "`validate`, `plan` and `run` take `--c`..." (sentence start) and
 *    "Add `--d` to `validate`, `plan`..." attribute every flag span of the
 *    sentence to every command named (reported at the paragraph's first line).
 * 5. Any other `--flag` in code must be a flag of some command, except in
 *    code for another program (a span or line starting with `npm`, `npx`
 *    not followed by ibatch, `node` not running bin/ibatch.js, `git`...)
 *    and the few names in NOT_IBATCH_FLAGS.
 * 6. Output-name placeholders: a span in README.md, docs/job-files.md or
 *    docs/outputs.md holding `{word}` (single braces, no `:` or `"`, so
 *    neither `{{ template }}` nor a YAML/JSON mapping) is an output name
 *    template and must pass `outputTemplateProblem` (the parser `validate`
 *    uses) with only TEMPLATE_FIELDS and the template-variable examples of
 *    TEMPLATE_VARIABLE_EXAMPLES, each of which the same docs must use as a
 *    `{{ name }}` template variable.
 * 7. Every `IBATCH_NAME` in the docs appears in a file under src/ (where the
 *    tool reads it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { commandsFor } from '../../src/cli/commands/index.js';
import { buildProgram } from '../../src/cli/main.js';
import { outputTemplateProblem } from '../../src/outputs/index.js';
import { capture, REPO } from '../helpers/index.js';

const DOCS = [
  'README.md',
  ...readdirSync(path.join(REPO, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];
const PLACEHOLDER_DOCS = new Set(['README.md', 'docs/job-files.md', 'docs/outputs.md']);

/** Flags shown in the docs that belong to something else than the ibatch CLI. */
const NOT_IBATCH_FLAGS: ReadonlyMap<string, string> = new Map([
  ['--regrow', 'an option of `npm run chaos` (docs/chaos.md)'],
  ['--heap-growing-percent', 'a V8 option bin/ibatch.js sets (docs/benchmarks.md)'],
  ['--trace-gc', "a V8 option a probe's run was given (docs/benchmarks.md)"],
]);
/** Programs whose spans and lines are not ibatch's (rule 5). */
const OTHER_PROGRAMS =
  /^(?:\$ )?(?:npm|npx(?! ibatch)|node(?! bin\/ibatch)|git|tmux|docker|curl)\b/;
/** Template variables the docs use as examples of `{NAME}` in output names. */
const TEMPLATE_VARIABLE_EXAMPLES = ['scene'];

interface Chunk {
  readonly file: string;
  readonly line: number;
  readonly text: string;
  /** A code span (false: a line of a fenced block). */
  readonly span: boolean;
}

interface Prose {
  readonly file: string;
  readonly line: number;
  /** The paragraph with every code span replaced by `\u0001<index>\u0002`. */
  readonly text: string;
  readonly spans: readonly string[];
}

function read(file: string): { chunks: Chunk[]; paragraphs: Prose[] } {
  const chunks: Chunk[] = [];
  const paragraphs: Prose[] = [];
  let fenced = false;
  let paragraph: { line: number; lines: string[] } | undefined;
  // A code span may run over lines (CommonMark): spans are cut from the
  // whole paragraph, each reported at the line it starts on.
  const endParagraph = () => {
    if (!paragraph) return;
    const { line, lines } = paragraph;
    const whole = lines.join('\n');
    const spans: string[] = [];
    const text = whole.replace(/`([^`]+)`/g, (_, code: string, offset: number) => {
      const at = line + (whole.slice(0, offset).match(/\n/g)?.length ?? 0);
      const flat = code.replace(/\s+/g, ' ').trim();
      chunks.push({ file, line: at, text: flat, span: true });
      spans.push(flat);
      return `\u0001${spans.length - 1}\u0002`;
    });
    paragraphs.push({ file, line, text: text.replace(/\s+/g, ' '), spans });
    paragraph = undefined;
  };
  readFileSync(path.join(REPO, file), 'utf8')
    .split('\n')
    .forEach((text, index) => {
      const line = index + 1;
      if (/^\s*(```|~~~)/.test(text)) {
        endParagraph();
        fenced = !fenced;
      } else if (fenced) chunks.push({ file, line, text, span: false });
      else if (text.trim() === '') endParagraph();
      else {
        paragraph ??= { line, lines: [] };
        paragraph.lines.push(text);
      }
    });
  endParagraph();
  return { chunks, paragraphs };
}

const program = buildProgram(
  {
    stdout: capture(),
    stderr: capture(),
    env: {},
    cwd: REPO,
    exitCode: 0,
  },
  await commandsFor(),
);
const commands = new Map<string, Command>(program.commands.map((c) => [c.name(), c]));

function flagsOf(command: Command | undefined): Set<string> {
  const flags = new Set(['--help', '-h']);
  if (!command) flags.add('--version').add('-V');
  for (const option of (command ?? program).options) {
    if (option.long) flags.add(option.long);
    if (option.short) flags.add(option.short);
  }
  return flags;
}

const FLAG = /(?:^|[\s[(])(--?[a-zA-Z][\w-]*)/g;
const flagsIn = (text: string) =>
  [...text.matchAll(FLAG)].map((match) => (match[1] ?? '').replace(/=.*$/, ''));

interface Claim {
  readonly where: string;
  /** Command names as written (may be unknown); empty: the top-level program. */
  readonly commands: readonly string[];
  readonly flags: readonly string[];
}

/** Rule 2: invocations in a chunk of code. */
function invocations(chunk: Chunk): Claim[] {
  const claims: Claim[] = [];
  const where = `${chunk.file}:${chunk.line}`;
  const pieces = chunk.text.split(/\s\|\s|;|&&|\s#\s|\s#$/);
  for (const piece of pieces) {
    const match = piece.match(
      /(?:^\s*(?:\$ )?|["(]\s*)(?:npx\s+ibatch|node\s+(?:\.\/)?bin\/ibatch\.js|ibatch)(?:\s+(.*))?$/,
    );
    if (!match) continue;
    const words = (match[1] ?? '').trim().split(/\s+/);
    const first = words[0] ?? '';
    if (first === '' || first.startsWith('-')) {
      claims.push({ where, commands: [], flags: flagsIn(match[1] ?? '') });
      continue;
    }
    if (!/^[A-Za-z][\w|-]*$/.test(first)) continue; // `ibatch ...`, `ibatch` CLI
    const named = /^[A-Z_]+$/.test(first) ? [...commands.keys()] : first.split('|');
    claims.push({ where, commands: named, flags: flagsIn(words.slice(1).join(' ')) });
  }
  return claims;
}

/** Rule 3: a span such as `run --max-spend N`. */
function commandSpan(chunk: Chunk): Claim | undefined {
  const match = chunk.span ? chunk.text.match(/^([a-z]+)\s+(-.*)$/) : null;
  if (!match || !commands.has(match[1] ?? '')) return undefined;
  return {
    where: `${chunk.file}:${chunk.line}`,
    commands: [match[1] ?? ''],
    flags: flagsIn(match[2] ?? ''),
  };
}

/** Rule 4: "`run` also takes `--x`", "`validate`, `plan` and `run` take", "Add `--x` to `run`". */
function proseClaims(prose: Prose): Claim[] {
  const claims: Claim[] = [];
  const spanAt = (token: string) => prose.spans[Number(token.slice(1, -1))] ?? '';
  const SPANS = '((?:\\u0001\\d+\\u0002(?:,\\s*|\\s+and\\s+|\\s+or\\s+)?)+)';
  const spansIn = (text: string) => (text.match(/\u0001\d+\u0002/g) ?? []).map(spanAt);
  const flagSpans = (text: string) =>
    spansIn(text)
      .filter((code) => code.startsWith('-'))
      .flatMap(flagsIn);
  for (const sentence of prose.text.split(/(?<=[.!?])\s+(?=[A-Z\u0001])/)) {
    const where = `${prose.file}:${prose.line}`;
    const takes = sentence.match(new RegExp(`^${SPANS}\\s*(?:also\\s+)?takes?\\b(.*)$`, 's'));
    if (takes) {
      const named = spansIn(takes[1] ?? '');
      if (named.every((name) => commands.has(name)))
        claims.push({ where, commands: named, flags: flagSpans(takes[2] ?? '') });
    }
    const add = sentence.match(new RegExp(`\\bAdd\\s+${SPANS}\\s*to\\s+${SPANS}`));
    if (add)
      claims.push({ where, commands: spansIn(add[2] ?? ''), flags: flagSpans(add[1] ?? '') });
  }
  return claims;
}

const docs = DOCS.map((file) => ({ file, ...read(file) }));
const chunks = docs.flatMap((doc) => doc.chunks);

function problemsOf(claims: readonly Claim[]): string[] {
  const problems: string[] = [];
  for (const claim of claims) {
    const targets = claim.commands.length === 0 ? [undefined] : claim.commands;
    for (const name of targets) {
      const command = name === undefined ? undefined : commands.get(name);
      if (name !== undefined && !command) {
        problems.push(`${claim.where}: \`ibatch ${name}\` is no command`);
        continue;
      }
      const accepted = flagsOf(command);
      for (const flag of claim.flags)
        if (!accepted.has(flag))
          problems.push(`${claim.where}: \`${name ?? 'ibatch'}\` takes no \`${flag}\``);
    }
  }
  return problems;
}

describe('docs match the tool', () => {
  it('every invocation names a command, with flags that command takes', () => {
    const claims = chunks.flatMap(invocations);
    expect(problemsOf(claims)).toEqual([]);
    // The extraction finds the docs' examples, and the docs show every command.
    expect(claims.length).toBeGreaterThan(30);
    expect(new Set(claims.flatMap((c) => c.commands))).toEqual(new Set(commands.keys()));
  });

  it('every `command --flag` span and "`cmd` takes `--flag`" sentence holds', () => {
    const spans = chunks.flatMap((chunk) => commandSpan(chunk) ?? []);
    const prose = docs.flatMap((doc) => doc.paragraphs.flatMap(proseClaims));
    expect(spans.length).toBeGreaterThan(10);
    expect(prose.map((c) => c.commands.join(','))).toEqual(
      expect.arrayContaining([
        'run',
        'validate,plan,run',
        'validate,plan,run,account,models,influencers',
      ]),
    );
    expect(problemsOf([...spans, ...prose])).toEqual([]);
  });

  it('every other flag in the docs is a flag of some command', () => {
    const every = new Set([...commands.values()].flatMap((c) => [...flagsOf(c)]));
    const problems = chunks
      .filter((chunk) => !OTHER_PROGRAMS.test(chunk.text.trim()))
      .flatMap((chunk) =>
        flagsIn(chunk.text)
          .filter((flag) => flag.startsWith('--'))
          .filter((flag) => !every.has(flag) && !NOT_IBATCH_FLAGS.has(flag))
          .map((flag) => `${chunk.file}:${chunk.line}: no command takes \`${flag}\``),
      );
    expect(problems).toEqual([]);
    // The allow-list holds only names that really are in the docs and not ibatch's.
    for (const flag of NOT_IBATCH_FLAGS.keys()) {
      expect(every.has(flag)).toBe(false);
      expect(chunks.some((chunk) => flagsIn(chunk.text).includes(flag))).toBe(true);
    }
  });

  it('every output-name placeholder is a template field or a template variable', () => {
    const templates = chunks.filter(
      (chunk) =>
        chunk.span &&
        PLACEHOLDER_DOCS.has(chunk.file) &&
        /(?<!\{)\{\s*\w+\s*\}(?!\})/.test(chunk.text) &&
        !/[:"]|\{\{/.test(chunk.text),
    );
    expect(templates.map((c) => c.text)).toContain('{step}/{name}-{n}.{ext}');
    const problems = templates.flatMap((chunk) => {
      const problem = outputTemplateProblem(chunk.text, TEMPLATE_VARIABLE_EXAMPLES);
      return problem ? [`${chunk.file}:${chunk.line}: ${problem}`] : [];
    });
    expect(problems).toEqual([]);
    const jobDocs = readFileSync(path.join(REPO, 'docs/job-files.md'), 'utf8');
    for (const name of TEMPLATE_VARIABLE_EXAMPLES)
      expect(jobDocs).toMatch(new RegExp(`\\{\\{ ${name} \\}\\}`));
  });

  it('every IBATCH_* variable in the docs is read in src/ (or, for the benchmarks, bench/)', () => {
    const sources = sourceText(path.join(REPO, 'src')) + sourceText(path.join(REPO, 'bench'));
    const names = new Set(
      chunks.flatMap((chunk) => chunk.text.match(/IBATCH_[A-Z0-9_]*[A-Z0-9]/g) ?? []),
    );
    expect(names.size).toBeGreaterThan(5);
    expect([...names].filter((name) => !sources.includes(name))).toEqual([]);
  });
});

function sourceText(dir: string): string {
  return readdirSync(dir)
    .map((name) => path.join(dir, name))
    .map((file) =>
      statSync(file).isDirectory()
        ? sourceText(file)
        : file.endsWith('.ts')
          ? readFileSync(file, 'utf8')
          : '',
    )
    .join('\n');
}
