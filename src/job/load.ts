/**
 * Loading a job file: YAML with positions -> strict schema -> normalised
 * `LoadedJob` -> structural rules (ids, `from:` chains, uploads, training
 * images). A schema mistake does not stop the rest: what the schema accepted
 * goes on to the structural rules (src/job/salvage.ts). Everything found is
 * reported at once in one `JobFileError`; model-dependent checks happen
 * later, in `scanJob`, and `checkJobFile` reports both together.
 */
import { dirname, resolve } from 'node:path';
import { sha256Hex } from '../shared/index.js';
import { parseDuration } from './duration.js';
import { JobFileError, type JobIssue } from './issues.js';
import { InputFileRefused, type JobLimits, jobLimits, readRegularFile } from './limits.js';
import { loadInfluencers, loadUploads } from './load-sections.js';
import { defaultJournalPath } from './local-files.js';
import { type NotifyTarget, notifyTarget } from './notify-targets.js';
import { outputGuardIssues } from './output-guard.js';
import { NOTHING_REFUSED, type Refused, salvageJobFile } from './salvage.js';
import { type JobFile, JobFileSchema } from './schema.js';
import { issueAt, type JobSource, type KeyPath, parseJobYaml } from './source-map.js';
import { decodeText, TextDecodeProblem } from './text-encoding.js';
import type { InfluencerRef, LoadedJob, LoadedStep, RowsFormat } from './types.js';
import { zodIssuesToJobIssues } from './zod-issues.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LoadOptions {
  /** Path shown in messages. @default the path as given */
  readonly displayPath?: string;
  /** The journal the job runs with, which outputs must never overwrite. @default `.ibatch/journal.db` beside the job (`defaultJournalPath`) */
  readonly journalPath?: string;
  /** The output folder the run uses instead of `output:` (`--out`), checked the same way. @default the job's `output:` */
  readonly outDir?: string;
  /** Ceilings other than the defaults (`--max-items`, `--allow-outside-job-folder`). @default DEFAULT_JOB_LIMITS */
  readonly limits?: Partial<JobLimits>;
  /**
   * The command only reads the output folder (export, deliver, review,
   * approve, reject): the checks of a folder a run would write into (links
   * leading out of it, a path that cannot be made) do not apply; what it
   * reads is checked file by file where it is read.
   * @default false
   */
  readonly readsOutputsOnly?: boolean;
}

/** Reads and checks a job file; throws `JobFileError` listing every problem. */
export function loadJob(path: string, options: LoadOptions = {}): LoadedJob {
  return loaded(readJob(path, options));
}

/** Same as `loadJob` for text already in memory (`file` locates relative paths). */
export function loadJobText(
  text: string,
  file: string,
  display = file,
  guard: Pick<LoadOptions, 'journalPath' | 'outDir' | 'limits' | 'readsOutputsOnly'> = {},
): LoadedJob {
  return loaded(readJobText(text, file, display, guard));
}

/**
 * A job file as far as it could be loaded, with every problem found. `job` is
 * there unless the file could not be read or parsed as YAML; when problems
 * were found it holds what the schema accepted (src/job/salvage.ts), for the
 * later checks to go on with, and must never be run.
 */
export interface JobReading {
  readonly job?: LoadedJob;
  readonly issues: readonly JobIssue[];
  readonly text?: string;
}

function loaded(reading: JobReading): LoadedJob {
  if (reading.job && !reading.issues.some((i) => i.severity === 'error')) return reading.job;
  throw new JobFileError(reading.issues, reading.text);
}

export function readJob(path: string, options: LoadOptions = {}): JobReading {
  const file = resolve(path);
  const display = options.displayPath ?? path;
  const limits = jobLimits(options.limits);
  let text: string;
  try {
    text = jobText(readRegularFile(file, 'job file', limits.maxJobFileBytes));
  } catch (error) {
    if (error instanceof TextDecodeProblem) {
      const fix = error.looksUtf16
        ? 'save it as UTF-8'
        : 'save it as UTF-8 (YAML is UTF-8 or UTF-16 with a byte-order mark)';
      return {
        issues: [
          {
            file: display,
            line: error.line,
            col: error.col,
            path: '',
            message: `job file: ${error.reason}: ${fix}`,
            severity: 'error',
          },
        ],
      };
    }
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      error instanceof InputFileRefused
        ? error.message
        : code === 'ENOENT'
          ? 'does not exist'
          : `cannot be read (${code})`;
    return {
      issues: [
        { file: display, line: 1, col: 1, path: '', message: `job file ${why}`, severity: 'error' },
      ],
    };
  }
  return readJobText(text, file, display, options);
}

/**
 * A job file's text: UTF-8, or UTF-16 with a byte-order mark (what Windows
 * editors save as "Unicode"). A UTF-8 BOM stays in the text, as it always
 * did, so a file's `textHash` is unchanged by its reading.
 */
function jobText(bytes: Buffer): string {
  const text = decodeText(bytes);
  return bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? `\uFEFF${text}` : text;
}

/** The step's `encoding:`/`delimiter:`/`sheet:`, when it has any. */
function rowsFormatOf(step: Pick<RowsFormat, keyof RowsFormat>): { rowsFormat?: RowsFormat } {
  const { encoding, delimiter, sheet } = step;
  const format = {
    ...(encoding !== undefined ? { encoding } : {}),
    ...(delimiter !== undefined ? { delimiter } : {}),
    ...(sheet !== undefined ? { sheet } : {}),
  };
  return Object.keys(format).length > 0 ? { rowsFormat: format } : {};
}

function readJobText(
  text: string,
  file: string,
  display: string,
  guard: Pick<LoadOptions, 'journalPath' | 'outDir' | 'limits' | 'readsOutputsOnly'>,
): JobReading {
  const limits = jobLimits(guard.limits);
  const parsed = parseJobYaml(display, text);
  const issues: JobIssue[] = [...parsed.issues];
  if (parsed.issues.some((i) => i.severity === 'error')) return { issues, text };
  const result = JobFileSchema.safeParse(parsed.value);
  let spec: JobFile;
  let refused: Refused = NOTHING_REFUSED;
  if (result.success) spec = result.data;
  else {
    issues.push(...zodIssuesToJobIssues(parsed.source, result.error.issues, parsed.value));
    ({ spec, refused } = salvageJobFile(parsed.value, result.error.issues));
  }
  const job = normalise(spec, parsed.source, file, text, limits, issues, refused);
  // The output checks of a refused `output:` would judge the default instead.
  if (guard.outDir !== undefined || !refused.rootKeys.has('output'))
    issues.push(
      ...outputGuardIssues(job, {
        journalPath: guard.journalPath ?? defaultJournalPath(job.dir),
        outputDir: guard.outDir ?? job.output,
        writes: guard.readsOutputsOnly !== true,
      }),
    );
  return { job, issues, text };
}

function normalise(
  spec: JobFile,
  source: JobSource,
  file: string,
  text: string,
  limits: JobLimits,
  issues: JobIssue[],
  refused: Refused,
): LoadedJob {
  const dir = dirname(file);
  const uploads = loadUploads(spec, source, dir, limits, issues);
  for (const id of refused.uploads) uploads.set(id, { id, globs: [], files: [], refused: true });
  const influencers = loadInfluencers(spec, source, uploads, issues, refused);
  const steps = spec.generations.map((step, index): LoadedStep => {
    const base = ['generations', index] as const;
    const refusedKeys = refused.stepKeys.get(index);
    let influencer: InfluencerRef | undefined;
    // A job-local influencer whose entry was refused is not looked up on the account.
    const refusedInfluencer =
      refused.influencers.has(step.influencer ?? '') || refused.rootKeys.has('influencers');
    if (step.influencer !== undefined && !refusedInfluencer) {
      if (influencers.has(step.influencer)) influencer = { jobLocal: step.influencer };
      else if (UUID.test(step.influencer)) influencer = { id: step.influencer };
      else if (/^[a-zA-Z0-9_]{3,30}$/.test(step.influencer))
        influencer = { username: step.influencer };
      else {
        const known = [...influencers.keys()];
        issues.push(
          issueAt(
            source,
            [...base, 'influencer'],
            `\`${step.influencer}\` is not a job-local influencer${known.length ? ` (${known.join(', ')})` : ''}, an influencerId (UUID) or a username`,
          ),
        );
      }
    }
    const timeoutMs = step.timeout === undefined ? undefined : parseDuration(step.timeout);
    return {
      id: step.id,
      index,
      ...(refusedKeys ? { refused: refusedKeys } : {}),
      modelId: step.model,
      ...(influencer ? { influencer } : {}),
      ...(step.copies !== undefined ? { copies: step.copies } : {}),
      count: step.count ?? 1,
      ...(step.matrix ? { matrix: step.matrix } : {}),
      ...(step.rows !== undefined ? { rows: resolve(dir, step.rows) } : {}),
      ...(step.key !== undefined
        ? { key: typeof step.key === 'string' ? [step.key] : step.key }
        : {}),
      ...(typeof step.from === 'string' ? { from: step.from } : {}),
      ...(typeof step.from === 'object' ? { from: step.from.step, pick: step.from.pick } : {}),
      input: step.input,
      retries: step.retries,
      retrySafetyBlocked: step.retrySafetyBlocked,
      filename: step.filename,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      ...rowsFormatOf(step),
    };
  });
  return {
    file,
    dir,
    textHash: sha256Hex(text),
    name: spec.name,
    ...(spec.budget !== undefined ? { budget: spec.budget } : {}),
    allOrNothing: spec.allOrNothing ?? false,
    ...(spec.trainingEstimate !== undefined ? { trainingEstimate: spec.trainingEstimate } : {}),
    tags: spec.tags ?? {},
    output: resolve(dir, spec.output ?? `out/${spec.name}`),
    notify: notifyTargetsOf(spec.notify),
    ...(spec.deliver !== undefined
      ? {
          deliver:
            typeof spec.deliver === 'string'
              ? { to: spec.deliver, approved: false }
              : { to: spec.deliver.to, approved: spec.deliver.approved },
        }
      : {}),
    uploads,
    influencers,
    steps: orderSteps(steps, source, issues),
    source,
    limits,
  };
}

function orderSteps(steps: LoadedStep[], source: JobSource, issues: JobIssue[]): LoadedStep[] {
  const byId = new Map<string, LoadedStep>();
  for (const step of steps) {
    if (byId.has(step.id)) {
      issues.push(
        issueAt(
          source,
          ['generations', step.index, 'id'],
          `step id \`${step.id}\` is used by generations[${byId.get(step.id)?.index}] too`,
        ),
      );
    } else byId.set(step.id, step);
  }
  const ordered: LoadedStep[] = [];
  const state = new Map<string, 'visiting' | 'done'>();
  const visit = (step: LoadedStep, trail: string[]): void => {
    const seen = state.get(step.id);
    if (seen === 'done') return;
    if (seen === 'visiting') {
      const cycle = [...trail.slice(trail.indexOf(step.id)), step.id].join(' -> ');
      issues.push(
        issueAt(
          source,
          ['generations', step.index, 'from'],
          `\`from:\` chain has a cycle: ${cycle}`,
        ),
      );
      return;
    }
    state.set(step.id, 'visiting');
    if (step.from !== undefined) {
      const parent = byId.get(step.from);
      if (!parent) {
        issues.push(
          issueAt(
            source,
            ['generations', step.index, ...fromPath(step)],
            `no step \`${step.from}\` (steps: ${[...byId.keys()].join(', ')})`,
          ),
        );
      } else if (parent.id === step.id) {
        issues.push(
          issueAt(
            source,
            ['generations', step.index, ...fromPath(step)],
            `step \`${step.id}\` cannot take its own outputs`,
          ),
        );
      } else visit(parent, [...trail, step.id]);
    }
    state.set(step.id, 'done');
    ordered.push(step);
  };
  for (const step of byId.values()) visit(step, []);
  return ordered;
}

/** Where a step's source step is named: `from:`, or its `step:` when it picks. */
function fromPath(step: LoadedStep): KeyPath {
  return step.pick ? ['from', 'step'] : ['from'];
}

/** `notify:` in its one form: a list of targets, each with its format. */
function notifyTargetsOf(spec: JobFile['notify']): NotifyTarget[] {
  if (spec === undefined) return [];
  const entries = typeof spec === 'string' ? [spec] : spec;
  return entries.map((entry) =>
    typeof entry === 'string' ? notifyTarget(entry) : notifyTarget(entry.url, entry.format),
  );
}
