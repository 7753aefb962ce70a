/**
 * `deliverOutputs`: copies a job's current (or approved) outputs and their
 * manifest to an object store, idempotently and journaled like downloads:
 * each object is recorded `sending` before it goes out and `delivered` once
 * the store has it. An object the journal shows delivered with the same
 * sha256 is skipped; one it does not know (or saw only as `sending`, a kill
 * mid-way) is first asked about (HEAD): the store's `x-amz-meta-sha256`
 * equal to ours means it is there. Nothing local is ever written or removed.
 */
import PQueue from 'p-queue';
import type { S3Destination } from '../job/index.js';
import type { DeliveryTarget, Journal } from '../journal/index.js';
import type { ManifestRow } from '../outputs/index.js';
import { InterruptedError, type Logger, silentLogger } from '../shared/index.js';
import {
  DeliveryConflictError,
  type DeliveryProgress,
  DeliveryRefusedError,
  DeliveryUnreachableError,
} from './errors.js';
import { manifestObjects, planDelivery } from './objects.js';
import type { ObjectStore, StoreObject } from './s3-store.js';
import { otherJobsRows } from './shared-prefix.js';

export interface DeliverOptions {
  readonly journal: Pick<Journal, 'getDelivery' | 'recordDelivery'>;
  readonly jobName: string;
  /** The outputs to deliver (`chosenRows` of src/review: current, approved if asked). */
  readonly rows: readonly ManifestRow[];
  readonly outputDir: string;
  readonly destination: S3Destination;
  readonly store: ObjectStore;
  /** The rows are only the approved outputs (said in the result). */
  readonly approvedOnly?: boolean;
  /**
   * Ask the store about every object, even those the journal shows delivered
   * (`ibatch deliver`: someone may have emptied the bucket). A run trusts the
   * journal. @default false
   */
  readonly verify?: boolean;
  /** The command that resumes, for messages (e.g. `ibatch deliver job.yaml`). */
  readonly resume: string;
  /** Most objects in flight at once. @default 4 */
  readonly concurrency?: number;
  readonly signal?: AbortSignal;
  readonly logger?: Logger;
}

export interface DeliveryResult {
  /** `s3://bucket/prefix`. */
  readonly destination: string;
  /** The store: the endpoint's origin, or 'aws'. */
  readonly store: string;
  readonly approvedOnly: boolean;
  /** Output files delivered (sent now or already there). */
  readonly outputs: number;
  /** Objects in all: outputs, sidecars and the two manifests. */
  readonly objects: number;
  /** Objects sent by this call. */
  readonly sent: number;
  /** Objects already in the store with the same sha256 (not sent again). */
  readonly unchanged: number;
  /** Chosen outputs whose file is gone from the output folder (not delivered). */
  readonly missing: readonly string[];
}

/** `manifest.jsonl` and `manifest.csv`. */
const MANIFEST_OBJECTS = 2;

export async function deliverOutputs(options: DeliverOptions): Promise<DeliveryResult> {
  const { destination, store } = options;
  const logger = options.logger ?? silentLogger();
  const approvedOnly = options.approvedOnly ?? false;
  const plan = await planDelivery(options.rows, options.outputDir, destination);
  for (const file of plan.missing)
    logger.warn({ file }, `${file} is not in the output folder: not delivered`);
  const counts = { sent: 0, unchanged: 0 };
  const total = plan.files.length + MANIFEST_OBJECTS;
  const send = async (object: StoreObject) => {
    const outcome = await deliverOne(options, object);
    counts[outcome] += 1;
    logger.debug({ key: object.key, outcome }, `delivery: ${object.key} ${outcome}`);
  };
  try {
    const others = await otherJobsRows(
      store,
      destination,
      options.jobName,
      plan.files,
      logger,
      options.signal,
    );
    await inQueue(plan.files, send, options.concurrency ?? 4, options.signal);
    const manifests = manifestObjects(destination, [...others, ...plan.rows]);
    await inQueue(manifests, send, 1, options.signal);
  } catch (error) {
    throw withProgress(error, { destination: destination.url, objects: total, ...counts }, options);
  }
  return {
    destination: destination.url,
    store: store.name,
    approvedOnly,
    outputs: plan.rows.length,
    objects: total,
    ...counts,
    missing: plan.missing,
  };
}

async function deliverOne(
  options: DeliverOptions,
  object: StoreObject,
): Promise<'sent' | 'unchanged'> {
  const { journal, store, signal } = options;
  const target: DeliveryTarget = { store: store.name, bucket: object.bucket, key: object.key };
  const record = (state: 'sending' | 'delivered') =>
    journal.recordDelivery({
      ...target,
      sha256: object.sha256,
      bytes: object.bytes,
      state,
      jobName: options.jobName,
    });
  const known = journal.getDelivery(target);
  const journaled = known?.sha256 === object.sha256 && known.state === 'delivered';
  if (journaled && !options.verify) return 'unchanged';
  if ((await store.head(object.bucket, object.key, signal)) === object.sha256) {
    if (!journaled) record('delivered');
    return 'unchanged';
  }
  record('sending');
  await store.put(object, signal);
  record('delivered');
  return 'sent';
}

/** Runs `work` on each object, at most `concurrency` at once; the first failure stops the rest. */
async function inQueue(
  objects: readonly StoreObject[],
  work: (object: StoreObject) => Promise<void>,
  concurrency: number,
  signal: AbortSignal | undefined,
): Promise<void> {
  const queue = new PQueue({ concurrency });
  let failure: { error: unknown } | undefined;
  const stop = (error: unknown) => {
    failure ??= { error };
    queue.clear();
  };
  const onAbort = () => stop(signal?.reason ?? new InterruptedError());
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (const object of objects) {
      void queue.add(async () => {
        if (failure || signal?.aborted) return;
        await work(object).catch(stop);
      });
    }
    await queue.onIdle();
  } finally {
    signal?.removeEventListener('abort', onAbort);
  }
  if (signal?.aborted) stop(signal.reason ?? new InterruptedError());
  if (failure) throw failure.error;
}

/** A store failure says how far the delivery got, that nothing local changed and how to resume. */
function withProgress(
  error: unknown,
  progress: DeliveryProgress,
  options: DeliverOptions,
): unknown {
  const { sent, unchanged, objects, destination } = progress;
  // Nothing was sent, and the same command would be refused again: no resume hint.
  if (error instanceof DeliveryConflictError)
    return new DeliveryConflictError(error.message, progress);
  const tail = `${sent + unchanged} of ${objects} objects are in ${destination}; nothing local was changed. Resume with \`${options.resume}\``;
  if (error instanceof DeliveryUnreachableError)
    return new DeliveryUnreachableError(`${error.message}. ${tail}`, error.cause, progress);
  if (error instanceof DeliveryRefusedError)
    return new DeliveryRefusedError(
      `${error.message}. Check the credentials, the bucket and its permissions (docs/deliver.md); ${tail}`,
      error.cause,
      progress,
    );
  return error;
}
