/**
 * A job's delivery (docs/deliver.md): its current (or approved) outputs and
 * their manifest copied to the S3-compatible store its `deliver:` (or the
 * caller) names. `ibatch deliver` calls `deliverJob` on its own; a run
 * (`connect().run`, `ibatch run`) calls `deliverAfterRun` once it finished.
 */
import {
  DeliveryError,
  type DeliveryResult,
  deliverOutputs,
  type ObjectStore,
  openS3Store,
} from '../deliver/index.js';
import { defaultJournalPath, loadJob, parseS3Url } from '../job/index.js';
import { openJournal } from '../journal/index.js';
import { readerOutputDir } from '../outputs/index.js';
import { chosenRows, newestRunOf, outputRows } from '../review/index.js';
import { fetchOutputsHere, type RunResult } from '../scheduler/index.js';
import { EXIT, isIbatchError, type Logger, type StopReason } from '../shared/index.js';
import { describedKeysOf } from './described-items.js';
import { shellQuote } from './resume-command.js';

export interface DeliverRequest {
  /** The job file, absolute. */
  readonly jobPath: string;
  /** The job file as the user named it (for the resume hint). */
  readonly displayPath: string;
  /** @default `.ibatch/journal.db` beside the job file */
  readonly journalPath?: string;
  /** The output folder. @default the one the newest run recorded, else the job's `output` */
  readonly outDir?: string;
  /** `s3://BUCKET/PREFIX`, instead of the job's `deliver.to`. @default the job's `deliver.to` */
  readonly to?: string;
  /** Only the outputs approved in review. @default the job's `deliver.approved` */
  readonly approved?: boolean;
  /** Ask the store about objects the journal shows delivered too. */
  readonly verify: boolean;
  /** Where the store's endpoint is read (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL). */
  readonly env: NodeJS.ProcessEnv;
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
}

/** Delivers the job's outputs; undefined when neither the request nor the job names a destination. */
export async function deliverJob(request: DeliverRequest): Promise<DeliveryResult | undefined> {
  const job = loadJob(request.jobPath, { readsOutputsOnly: true });
  const to = request.to ?? job.deliver?.to;
  if (to === undefined) return undefined;
  const destination = parseS3Url(to);
  const { keys: described } = await describedKeysOf(job);
  const journal = await openJournal(request.journalPath ?? defaultJournalPath(job.dir), {
    job: job.name,
  });
  let store: ObjectStore | undefined;
  try {
    const run = newestRunOf(journal, job.name);
    const outputDir = request.outDir ?? readerOutputDir(run, job.output);
    const approvedOnly = request.approved === true || job.deliver?.approved === true;
    const rows = chosenRows(outputRows(journal, job.name, outputDir, described), approvedOnly);
    await fetchOutputsHere(journal, job.name, outputDir, rows, {
      ...(request.signal ? { signal: request.signal } : {}),
    });
    store = await openS3Store({ env: request.env });
    return await deliverOutputs({
      journal,
      jobName: job.name,
      rows,
      outputDir,
      destination,
      store,
      approvedOnly,
      verify: request.verify,
      resume: [
        'ibatch deliver',
        shellQuote(request.displayPath),
        ...(request.to ? ['--to', shellQuote(destination.url)] : []),
      ].join(' '),
      ...(request.signal ? { signal: request.signal } : {}),
      ...(request.logger ? { logger: request.logger } : {}),
    });
  } finally {
    journal.close();
    store?.close();
  }
}

/** A delivery that failed: how far it got, and the error that stopped it. */
export interface FailedDelivery {
  /** `s3://bucket/prefix`; null when it failed before it knew (the store did not open). */
  readonly destination: string | null;
  /** Objects the delivery had to make present. */
  readonly objects: number;
  /** Objects sent before it stopped. */
  readonly sent: number;
  /** Objects already there with the same sha256. */
  readonly unchanged: number;
  /** The error's stable `code` and its message (redacted where it is shown). */
  readonly error: { readonly code: string; readonly message: string };
}

/** What a run's delivery did: the result, or the failure that stopped it (tell them apart by `error`). */
export type RunDelivery = DeliveryResult | FailedDelivery;

/** A run's delivery and what it makes of the invocation's end. */
export interface DeliveryAfterRun {
  /** Undefined when the run stopped or nothing names a destination. */
  readonly delivery?: RunDelivery;
  /** The run's exit code, or the delivery failure's (4). */
  readonly exitCode: RunResult['exitCode'];
  /** `delivery` when the delivery failed. */
  readonly stopReason?: StopReason | null;
}

/**
 * A run that finished (items failed or not) delivers; one that stopped
 * delivers nothing: the run that finishes it will. A delivery failure keeps
 * the run as it is and becomes the exit code (4, stop reason `delivery`);
 * anything else ibatch did not raise on purpose is rethrown.
 */
export async function deliverAfterRun(
  result: RunResult,
  request: Omit<DeliverRequest, 'outDir' | 'verify' | 'approved'>,
): Promise<DeliveryAfterRun> {
  const { exitCode } = result;
  if (exitCode !== EXIT.ok && exitCode !== EXIT.itemsFailed) return { exitCode };
  try {
    const delivery = await deliverJob({ ...request, outDir: result.outputDir, verify: false });
    return delivery ? { delivery, exitCode } : { exitCode };
  } catch (error) {
    if (!isIbatchError(error)) throw error;
    const progress = error instanceof DeliveryError ? error.progress : undefined;
    const failed: FailedDelivery = {
      destination: progress?.destination ?? null,
      objects: progress?.objects ?? 0,
      sent: progress?.sent ?? 0,
      unchanged: progress?.unchanged ?? 0,
      error: { code: error.code, message: error.message },
    };
    return { delivery: failed, exitCode: error.exitCode, stopReason: error.stopReason };
  }
}
