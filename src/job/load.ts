/**
 * Loading a job file: YAML with positions -> strict schema -> normalised
 * `LoadedJob` -> structural rules (ids, `from:` chains, uploads, training
 * images). Everything found is reported at once in one `JobFileError`.
 * Model-dependent checks happen later, in `expandJob`.
 */
import { basename, dirname, relative, resolve } from 'node:path';
import { LIMITS, TRAINING_IMAGE_TYPES, uploadTypeOfFileName } from '../contract/index.js';
import { sha256Hex } from '../shared/index.js';
import { expandGlobs } from '../uploads/index.js';
import { parseDuration } from './duration.js';
import { uploadableProblem } from './files.js';
import { JobFileError, type JobIssue } from './issues.js';
import {
  globRootProblem,
  InputFileRefused,
  type JobLimits,
  jobLimits,
  readRegularFile,
} from './limits.js';
import { defaultJournalPath } from './local-files.js';
import { outputGuardIssues } from './output-guard.js';
import { type JobFile, JobFileSchema } from './schema.js';
import { issueAt, type JobSource, type KeyPath, parseJobYaml } from './source-map.js';
import type { InfluencerRef, LoadedInfluencer, LoadedJob, LoadedStep, UploadSet } from './types.js';
import { zodIssuesToJobIssues } from './zod-issues.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface LoadOptions {
  /** Path shown in messages (default: the path as given). */
  readonly displayPath?: string;
  /** The journal the job runs with, which outputs must never overwrite. @default `.ibatch/journal.db` beside the job */
  readonly journalPath?: string;
  /** The output folder the run uses instead of `output:` (`--out`), checked the same way. */
  readonly outDir?: string;
  /** Ceilings other than the defaults (`--max-items`, `--allow-outside-job-folder`). */
  readonly limits?: Partial<JobLimits>;
}

/** Reads and checks a job file; throws `JobFileError` listing every problem. */
export function loadJob(path: string, options: LoadOptions = {}): LoadedJob {
  const file = resolve(path);
  const display = options.displayPath ?? path;
  const limits = jobLimits(options.limits);
  let text: string;
  try {
    text = readRegularFile(file, 'job file', limits.maxJobFileBytes);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why =
      error instanceof InputFileRefused
        ? error.message
        : code === 'ENOENT'
          ? 'does not exist'
          : `cannot be read (${code})`;
    throw new JobFileError([
      { file: display, line: 1, col: 1, path: '', message: `job file ${why}`, severity: 'error' },
    ]);
  }
  return loadJobText(text, file, display, options);
}

/** Same as `loadJob` for text already in memory (`file` locates relative paths). */
export function loadJobText(
  text: string,
  file: string,
  display = file,
  guard: Pick<LoadOptions, 'journalPath' | 'outDir' | 'limits'> = {},
): LoadedJob {
  const limits = jobLimits(guard.limits);
  const parsed = parseJobYaml(display, text);
  const issues: JobIssue[] = [...parsed.issues];
  if (parsed.issues.some((i) => i.severity === 'error')) throw new JobFileError(issues, text);
  const result = JobFileSchema.safeParse(parsed.value);
  if (!result.success) {
    issues.push(...zodIssuesToJobIssues(parsed.source, result.error.issues, parsed.value));
    throw new JobFileError(issues, text);
  }
  const job = normalise(result.data, parsed.source, file, text, limits, issues);
  issues.push(
    ...outputGuardIssues(job, {
      journalPath: guard.journalPath ?? defaultJournalPath(job.dir),
      outputDir: guard.outDir ?? job.output,
    }),
  );
  if (issues.some((i) => i.severity === 'error')) throw new JobFileError(issues, text);
  return job;
}

function normalise(
  spec: JobFile,
  source: JobSource,
  file: string,
  text: string,
  limits: JobLimits,
  issues: JobIssue[],
): LoadedJob {
  const dir = dirname(file);
  const uploads = loadUploads(spec, source, dir, limits, issues);
  const influencers = loadInfluencers(spec, source, uploads, issues);
  const steps = spec.generations.map((step, index): LoadedStep => {
    const base = ['generations', index] as const;
    let influencer: InfluencerRef | undefined;
    if (step.influencer !== undefined) {
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
      modelId: step.model,
      ...(influencer ? { influencer } : {}),
      ...(step.copies !== undefined ? { copies: step.copies } : {}),
      count: step.count ?? 1,
      ...(step.matrix ? { matrix: step.matrix } : {}),
      ...(step.rows !== undefined ? { rows: resolve(dir, step.rows) } : {}),
      ...(typeof step.from === 'string' ? { from: step.from } : {}),
      ...(typeof step.from === 'object' ? { from: step.from.step, pick: step.from.pick } : {}),
      input: step.input,
      retries: step.retries,
      retrySafetyBlocked: step.retrySafetyBlocked,
      filename: step.filename,
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    };
  });
  return {
    file,
    dir,
    textHash: sha256Hex(text),
    name: spec.name,
    ...(spec.budget !== undefined ? { budget: spec.budget } : {}),
    output: resolve(dir, spec.output ?? `out/${spec.name}`),
    uploads,
    influencers,
    steps: orderSteps(steps, source, issues),
    source,
    limits,
  };
}

function loadUploads(
  spec: JobFile,
  source: JobSource,
  dir: string,
  limits: JobLimits,
  issues: JobIssue[],
): Map<string, UploadSet> {
  const uploads = new Map<string, UploadSet>();
  for (const [id, set] of Object.entries(spec.uploads ?? {})) {
    const path = ['uploads', id, 'files'];
    // Refused before scanning: `/**/*.png` would walk the whole disk.
    const refused = set.files.flatMap((glob, index) => {
      const problem = globRootProblem(glob, limits);
      return problem ? [issueAt(source, [...path, index], problem)] : [];
    });
    if (refused.length > 0) {
      issues.push(...refused);
      uploads.set(id, { id, globs: set.files, files: [] });
      continue;
    }
    const { files } = expandGlobs(dir, set.files);
    if (files.length === 0)
      issues.push(
        issueAt(
          source,
          path,
          `no file matches ${set.files.join(', ')} (relative to ${basename(dir) || dir}/)`,
        ),
      );
    for (const f of files) {
      const problem = uploadableProblem(f);
      if (problem) issues.push(issueAt(source, path, `${relative(dir, f)} ${problem}`));
    }
    uploads.set(id, { id, globs: set.files, files });
  }
  return uploads;
}

function loadInfluencers(
  spec: JobFile,
  source: JobSource,
  uploads: ReadonlyMap<string, UploadSet>,
  issues: JobIssue[],
): Map<string, LoadedInfluencer> {
  const influencers = new Map<string, LoadedInfluencer>();
  for (const [id, inf] of Object.entries(spec.influencers ?? {})) {
    const path = ['influencers', id, 'images'];
    let images: LoadedInfluencer['images'];
    if (typeof inf.images === 'string') {
      images = { uploadSet: inf.images };
      const set = uploads.get(inf.images);
      if (!set) {
        const known = [...uploads.keys()];
        issues.push(
          issueAt(
            source,
            path,
            `no upload set \`${inf.images}\`${known.length ? ` (known: ${known.join(', ')})` : ' (add it under `uploads`)'}`,
          ),
        );
      } else {
        if (set.files.length > LIMITS.trainingImagesMax) {
          issues.push(
            issueAt(
              source,
              path,
              `upload set \`${inf.images}\` has ${set.files.length} files; training takes 1 to ${LIMITS.trainingImagesMax} images`,
            ),
          );
        }
        for (const f of set.files) {
          const mime = uploadTypeOfFileName(f)?.mime;
          if (mime && !TRAINING_IMAGE_TYPES.some((t) => t.mime === mime)) {
            issues.push(
              issueAt(
                source,
                path,
                `${basename(f)} is ${mime}; training takes JPEG, PNG or WebP images only`,
              ),
            );
          }
        }
      }
    } else {
      images = { urls: inf.images };
    }
    influencers.set(id, {
      id,
      name: inf.name,
      ...(inf.username !== undefined ? { username: inf.username } : {}),
      style: inf.style,
      gender: inf.gender,
      images,
      consentAcknowledged: true,
    });
  }
  return influencers;
}

/** Unique ids, known `from:` sources, no cycles; sources ordered before dependants. */
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
