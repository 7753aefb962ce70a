/**
 * What the job file described when a run was last driven, recorded on the
 * run (its options' `jobFacts`) so that the readers given the job file
 * (`status`, `report`) need not expand it again while it is unchanged: the
 * fingerprint of the job's whole input (the job file, its rows files, its
 * upload-set files and the cached model contracts it was expanded with) and
 * what the job file changed in the job's record on the run's service
 * (`jobFileDrift`: items removed from it, items it now describes otherwise),
 * counted per step at the run's end.
 *
 * Nothing but a run of the job changes those counts (the job's lock is held
 * meanwhile), so they hold while the run is the job's newest and its input's
 * fingerprint is unchanged; otherwise a reader expands the job file as
 * before. A job whose items name local files of their own (a reference image
 * per row) records none: their contents count too, and their paths are known
 * only by expanding the job.
 */
import { jobInputPaths, type LoadedJob } from '../job/index.js';
import { type HeldStrings, type Journal, type RunRecord, serviceOfRun } from '../journal/index.js';
import { contentHash } from '../shared/index.js';
import { hashFile } from '../uploads/index.js';
import { jobFileDrift } from './decide/run-history.js';

/** Items per step (`status`'s `job.removed` and `job.changed`). */
export interface StepItems {
  readonly step: string;
  readonly items: number;
}

export interface JobFacts {
  /** `inputFingerprint` of the job as the run read it. */
  readonly input: string;
  /** The service (canonical) the counts are of. */
  readonly service: string;
  readonly removed: readonly StepItems[];
  readonly changed: readonly StepItems[];
}

/**
 * The fingerprint of everything the job's expansion reads besides the
 * local files its items name: the content of each of `jobInputPaths` (a
 * missing file counts as such).
 */
export async function inputFingerprint(job: LoadedJob): Promise<string> {
  const files = [...new Set(jobInputPaths(job))].sort();
  const hashes = await Promise.all(
    files.map(async (file) => [file, await hashFile(file).catch(() => null)]),
  );
  return contentHash(hashes);
}

/** Whether the job's items name local files beyond `jobInputPaths` (then no facts are recorded). */
export function namesOwnFiles(job: LoadedJob, localFiles: Iterable<string>): boolean {
  const inputs = new Set(jobInputPaths(job));
  for (const file of localFiles) if (!inputs.has(file)) return true;
  return false;
}

/**
 * Records the facts of run `runId` of `jobName` on `service`: `keys`, the
 * job's items' keys; `identities`, their identity hashes.
 */
export function recordJobFacts(
  journal: Journal,
  run: Pick<RunRecord, 'runId' | 'jobName'>,
  input: { readonly fingerprint: string; readonly service: string },
  keys: { has(key: string): boolean },
  identities: { get(key: string): string | undefined },
  /** The job's items' own strings, for the records read here to share (`latestItems`). */
  held?: HeldStrings,
): void {
  const drift = jobFileDrift(journal, run.jobName, input, keys, identities, held);
  const facts: JobFacts = {
    input: input.fingerprint,
    service: input.service,
    removed: perStep(drift.removed),
    changed: perStep(drift.changed),
  };
  journal.setRunJobFacts(run.runId, JSON.stringify(facts));
}

/** What the journal knows of the job file at `fingerprint`, without expanding it. */
export interface KnownJobFile {
  /** Items it no longer describes, per step: none (see `knownJobFile`). */
  readonly removed: readonly StepItems[];
  /** Items it describes otherwise than they were made, per step. */
  readonly changed: readonly StepItems[];
}

/** More runs than any journal holds: `listRuns` then returns all of them. */
const EVERY_RUN = 1_000_000;

/**
 * The facts the job's newest run recorded, when they are of the job's input
 * as it is now (`fingerprint`) and of the service the run is on, and say the
 * job file describes every item of the job's runs (nothing removed from it,
 * every run on that one service: no output is retired, which a reader would
 * otherwise need the job's keys to tell); undefined otherwise: the job file
 * is to be expanded.
 */
export function knownJobFile(
  journal: Pick<Journal, 'listRuns'>,
  jobName: string,
  fingerprint: string,
): KnownJobFile | undefined {
  const runs = journal.listRuns(jobName, EVERY_RUN);
  const newest = runs[0];
  const facts = newest ? factsOf(newest) : undefined;
  if (!newest || !facts || facts.input !== fingerprint) return undefined;
  const service = serviceOfRun(newest);
  const everyItem =
    facts.service === service &&
    facts.removed.length === 0 &&
    runs.every((run) => serviceOfRun(run) === service);
  return everyItem ? { removed: facts.removed, changed: facts.changed } : undefined;
}

function factsOf(run: RunRecord): JobFacts | undefined {
  const text = (run.options as { jobFacts?: unknown } | null)?.jobFacts;
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text) as JobFacts;
  } catch {
    return undefined;
  }
}

/** Rows counted per step, in the order steps first appear. */
export function perStep(rows: readonly { readonly stepId: string }[]): StepItems[] {
  const counts = new Map<string, number>();
  for (const row of rows) counts.set(row.stepId, (counts.get(row.stepId) ?? 0) + 1);
  return [...counts].map(([step, items]) => ({ step, items }));
}
