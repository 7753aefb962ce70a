/**
 * The facts `ibatch status` shows, read from the journal alone (works offline,
 * read-only, no lock): the runs of a job, and for one run its per-step
 * progress, spend against the budget, failures, a persisted account-wide rate
 * wait and how to resume. `buildStatus` is the `--json` document;
 * `renderStatus` is the same for a person. Shape documented in docs/run.md.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { defaultJournalPath } from '../job/index.js';
import {
  type BudgetStanding,
  FINISHED_RUN_STATUSES,
  type Journal,
  type RunRecord,
  type RunStatus,
  scopeOfRun,
  serviceOfRun,
} from '../journal/index.js';
import { resumeCommand } from '../library/index.js';
import { type DescribedItems, EVERY_ITEM, recordedOutputDir } from '../outputs/index.js';
import { type TrainingPrice, trainingPrice, trainingPriceText } from '../plan/index.js';
import { type ReviewCounts, reviewCounts } from '../review/index.js';
import { jobFileDrift, type KnownJobFile, perStep, runProgress } from '../scheduler/index.js';
import { UsageError } from '../shared/index.js';
import { countsText, formatWait, stepCounts } from './progress-format.js';

export interface StatusRunSummary {
  readonly runId: string;
  readonly jobName: string;
  readonly status: RunStatus;
  readonly createdAt: string;
  readonly finishedAt: string | null;
  readonly budget: number | null;
  readonly net: number;
}

export interface StatusStep {
  readonly id: string;
  readonly total: number;
  readonly done: number;
  readonly inFlight: number;
  readonly failed: number;
  readonly queued: number;
  /** Raw item counts per journal state. */
  readonly states: Readonly<Record<string, number>>;
}

export interface StatusDocument {
  readonly journal: string;
  /** Newest first. */
  readonly runs: readonly StatusRunSummary[];
  /** The selected run (latest by default); null when the journal has none. */
  readonly run: {
    readonly runId: string;
    readonly jobName: string;
    readonly jobPath: string;
    readonly status: RunStatus;
    readonly finished: boolean;
    readonly createdAt: string;
    readonly updatedAt: string;
    readonly finishedAt: string | null;
    readonly outputDir: string | null;
    /** The job's `tags:` the run was last driven with (`ibatch costs --by tag:NAME`). */
    readonly tags: Readonly<Record<string, string>>;
    /** Persisted account-wide rate wait (ISO), null when none is pending. */
    readonly notBefore: string | null;
    /** Milliseconds left of that wait at the time of `status` (0 when none). */
    readonly waitMs: number;
  } | null;
  readonly steps: readonly StatusStep[];
  readonly spend: {
    readonly reserved: number;
    readonly charged: number;
    readonly refunded: number;
    readonly net: number;
    readonly committed: number;
    /** The job's budget (as `job.budget`). */
    readonly budget: number | null;
    /** What is left of it over all the job's runs on this service (as `job.remaining`); null without a budget. */
    readonly remaining: number | null;
  } | null;
  /**
   * The price the next run reserves for one training: the account's last
   * training charge, else an estimate (`estimated: true`); null when the
   * journal has no run.
   */
  readonly trainingPrice: TrainingPrice | null;
  readonly failures: readonly {
    readonly step: string;
    readonly item: string;
    readonly label: string;
    readonly state: string;
    readonly error: string | null;
  }[];
  /** The command that resumes the run; null when it finished. */
  readonly resume: string | null;
  /**
   * The selected run's job over all its runs on the run's service and
   * account (what `budget` caps); null when the journal has no run.
   */
  readonly job: JobStatus | null;
  /** The job's current output files per step and review state (docs/review.md). */
  readonly review: readonly ReviewCounts[];
}

export interface JobStatus {
  readonly name: string;
  /** The job file's budget when it was given, else the run's. */
  readonly budget: number | null;
  /** The job's spend over all its runs on the run's service (the journal's `budgetStanding`). */
  readonly spend: BudgetStanding;
  /** budget - committed over all runs; null without a budget. */
  readonly remaining: number | null;
  /**
   * Items earlier runs made or tried that the job file no longer describes,
   * per step (left as they are); null unless the job file was given and
   * could be expanded offline.
   */
  readonly removed: readonly { readonly step: string; readonly items: number }[] | null;
  /**
   * Items made (or tried) whose values the job file now describes otherwise
   * (the `changed` verdict: the next `run` makes them again), per step; null
   * like `removed`. Items naming local files are not judged here (`plan` is).
   */
  readonly changed: readonly { readonly step: string; readonly items: number }[] | null;
  /** Why `removed` is null. */
  readonly removedUnknown?: string;
}

/** What `status JOB.yaml` learnt from the job file (commands/status.ts). */
export interface JobFileFacts {
  readonly budget: number | null;
  /** The job file's `trainingEstimate:`. */
  readonly trainingEstimate?: number;
  /** The keys of the job's items; absent when the job could not be expanded, with why. */
  readonly keys?: ReadonlySet<string>;
  /** Identity hashes of the job's items that name no local file, by key. */
  readonly identities?: ReadonlyMap<string, string>;
  /** What the journal knows of the unchanged job file, in place of `keys` (it describes every item). */
  readonly known?: KnownJobFile;
  readonly keysUnknown?: string;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The job name of a job file, read without validating the rest (status must work on an old file). */
export function jobNameOf(jobPath: string): string {
  let text: string;
  try {
    text = readFileSync(jobPath, 'utf8');
  } catch {
    throw new UsageError(`No job file at ${jobPath}`);
  }
  const doc = parseYaml(text) as { name?: unknown } | null;
  if (!doc || typeof doc.name !== 'string' || doc.name === '') {
    throw new UsageError(`${jobPath}: expected a top-level \`name\``);
  }
  return doc.name;
}

export function buildStatus(
  journal: Journal,
  select: {
    jobName?: string;
    runId?: string;
    jobFile?: JobFileFacts;
    /** `$IBATCH_TRAINING_ESTIMATE`. */
    trainingEstimate?: number;
  },
  now = Date.now(),
): StatusDocument {
  let selected: RunRecord | undefined;
  let jobName = select.jobName;
  if (select.runId) {
    selected = journal.getRun(select.runId);
    if (!selected) throw new UsageError(`No run ${select.runId} in the journal ${journal.path}`);
    jobName = selected.jobName;
  }
  const runs = journal.listRuns(jobName);
  if (select.jobName && runs.length === 0) {
    throw new UsageError(`No run of job "${select.jobName}" in the journal ${journal.path}`);
  }
  selected ??= runs[0];
  const summaries = runs.map((r) => ({
    runId: r.runId,
    jobName: r.jobName,
    status: r.status,
    createdAt: new Date(r.createdAt).toISOString(),
    finishedAt: iso(r.finishedAt),
    budget: r.budget,
    net: journal.spendSummary(r.runId).net,
  }));
  if (!selected) {
    return {
      journal: journal.path,
      runs: summaries,
      run: null,
      steps: [],
      spend: null,
      trainingPrice: null,
      failures: [],
      resume: null,
      job: null,
      review: [],
    };
  }
  const runId = selected.runId;
  const finished = FINISHED_RUN_STATUSES.includes(selected.status);
  const outputDir = recordedOutputDir(selected);
  const waiting = selected.notBefore !== null && selected.notBefore > now;
  const spend = journal.spendSummary(runId);
  const job = jobStatus(journal, selected, select.jobFile);
  return {
    journal: journal.path,
    runs: summaries,
    run: {
      runId,
      jobName: selected.jobName,
      jobPath: selected.jobPath,
      status: selected.status,
      finished,
      createdAt: new Date(selected.createdAt).toISOString(),
      updatedAt: new Date(selected.updatedAt).toISOString(),
      finishedAt: iso(selected.finishedAt),
      outputDir: outputDir ?? null,
      tags: selected.tags,
      notBefore: waiting ? iso(selected.notBefore) : null,
      waitMs: waiting && selected.notBefore !== null ? selected.notBefore - now : 0,
    },
    steps: runProgress(journal, runId).map((step) => {
      const states = step.states as Record<string, number>;
      const { open: _, ...counts } = stepCounts(step.total, states);
      return { id: step.stepId, ...counts, states };
    }),
    spend: { ...spend, budget: job.budget, remaining: job.remaining },
    trainingPrice: trainingPrice(journal.lastTrainingCharge(scopeOfRun(selected)), {
      job: select.jobFile?.trainingEstimate,
      environment: select.trainingEstimate,
    }),
    failures: journal.listFailures(runId).map((i) => ({
      step: i.stepId,
      item: i.itemKey,
      label: i.label,
      state: i.state,
      error: i.error,
    })),
    resume: finished ? null : resumeRun(selected, journal.path),
    job,
    review: outputDir
      ? reviewCounts(journal, selected.jobName, outputDir, describedBy(select.jobFile))
      : [],
  };
}

/** The job's spend over all its runs on the run's service, and what the job file no longer holds. */
function jobStatus(journal: Journal, run: RunRecord, file: JobFileFacts | undefined): JobStatus {
  const service = serviceOfRun(run);
  const spend = journal.budgetStanding(
    { name: run.jobName, budget: file ? file.budget : run.budget },
    service,
  );
  let removed: JobStatus['removed'] = null;
  let changed: JobStatus['changed'] = null;
  if (file?.known) {
    removed = file.known.removed;
    changed = file.known.changed;
  } else if (file?.keys) {
    const drift = jobFileDrift(
      journal,
      run.jobName,
      { service },
      file.keys,
      file.identities ?? new Map(),
    );
    removed = perStep(drift.removed);
    changed = perStep(drift.changed);
  }
  return {
    name: run.jobName,
    budget: spend.budget,
    spend,
    remaining: spend.remaining,
    removed,
    changed,
    ...(removed === null
      ? { removedUnknown: file?.keysUnknown ?? 'give the job file to list them' }
      : {}),
  };
}

/** The items the job file describes, when it was given and its items are known. */
function describedBy(file: JobFileFacts | undefined): DescribedItems | undefined {
  return file?.known ? EVERY_ITEM : file?.keys;
}

function resumeRun(run: RunRecord, journalPath: string): string {
  // The default journal sits beside the job file; name it only when it is elsewhere.
  const defaultJournal = defaultJournalPath(path.dirname(run.jobPath));
  const journal = journalPath === defaultJournal ? {} : { journal: journalPath };
  return resumeCommand(run.jobPath, { ...journal, runId: run.runId });
}

const NEXT_STEP: Partial<Record<RunStatus, string>> = {
  stopped_credits: "raise the job's budget or top up the account, then",
  stopped_unauthorized: 'set IBATCH_API_KEY to a valid key, then',
  stopped_unreachable: 'when the service is reachable,',
  stopped_error: 'once the error it stopped on is dealt with,',
  running: 'if no process is running it (it was killed, or could not write its journal),',
};

export function renderStatus(doc: StatusDocument, now = Date.now()): string {
  const out: string[] = [];
  if (doc.runs.length > 1 || !doc.run) {
    out.push(`runs in ${doc.journal} (newest first):`);
    for (const r of doc.runs.slice(0, 10)) {
      const mark = r.runId === doc.run?.runId ? '*' : ' ';
      out.push(` ${mark} ${r.runId}  ${r.jobName}  ${r.status}  ${r.net} credits  ${r.createdAt}`);
    }
    if (doc.runs.length > 10) out.push(`   ... and ${doc.runs.length - 10} more`);
    out.push('');
  }
  const run = doc.run;
  if (!run) {
    out.push('no runs yet');
    return `${out.join('\n')}\n`;
  }
  out.push(`run ${run.runId} of ${run.jobName}: ${run.status}`);
  out.push(`  started ${run.createdAt}${run.finishedAt ? `, finished ${run.finishedAt}` : ''}`);
  const tags = Object.entries(run.tags).map(([name, value]) => `${name}=${value}`);
  if (tags.length > 0) out.push(`  tags: ${tags.join(', ')}`);
  for (const s of doc.steps) {
    out.push(`  ${s.id.padEnd(16)} ${countsText(s)}`);
  }
  const sp = doc.spend;
  if (sp) {
    const budget =
      sp.budget === null ? 'no budget' : `of ${sp.budget} budget (${sp.remaining} left)`;
    out.push(
      `  credits: ${sp.net} net ${budget}; ${sp.charged} charged, ${sp.refunded} refunded, ${sp.reserved} reserved`,
    );
  }
  // Trainings are the journal's `influencers` step: the price matters to jobs that train.
  if (doc.trainingPrice && doc.steps.some((s) => s.id === 'influencers')) {
    out.push(`  training price: ${trainingPriceText(doc.trainingPrice)}`);
  }
  if (run.notBefore) {
    const left = Date.parse(run.notBefore) - now;
    out.push(
      `  rate wait: resumes in ${formatWait(Math.max(0, left))} (not before ${run.notBefore})`,
    );
  }
  if (doc.failures.length > 0) {
    out.push(`  failures (${doc.failures.length}):`);
    for (const f of doc.failures.slice(0, 20)) {
      out.push(`    ${f.step}/${f.item} ${f.state}: ${f.error ?? '-'}`);
    }
    if (doc.failures.length > 20) out.push(`    ... and ${doc.failures.length - 20} more`);
  }
  const job = doc.job;
  if (job && (doc.runs.length > 1 || job.budget !== null)) {
    const budget =
      job.budget === null ? 'no budget' : `of ${job.budget} budget (${job.remaining} left)`;
    out.push(`  job ${job.name}, all runs: ${job.spend.net} net ${budget}`);
  }
  for (const r of job?.changed ?? []) {
    out.push(`  ${r.step}: ${r.items} item(s) changed in the job file, made again by the next run`);
  }
  for (const r of job?.removed ?? []) {
    out.push(`  ${r.step}: ${r.items} item(s) no longer in the job file, left as they are`);
  }
  for (const r of doc.review) {
    const older = [
      r.superseded > 0 ? `${r.superseded} superseded` : '',
      r.retired > 0 ? `${r.retired} removed from the job` : '',
    ].filter((part) => part !== '');
    out.push(
      `  review ${r.step}: ${r.approved} approved, ${r.rejected} rejected, ${r.unreviewed} unreviewed` +
        (older.length > 0 ? `; not current: ${older.join(', ')}` : ''),
    );
  }
  if (run.outputDir) out.push(`  outputs: ${run.outputDir}`);
  if (doc.resume)
    out.push(`  to resume: ${NEXT_STEP[run.status] ?? ''} ${doc.resume}`.replace(/: +/, ': '));
  return `${out.join('\n')}\n`;
}
