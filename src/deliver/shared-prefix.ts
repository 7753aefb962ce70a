/**
 * A prefix several jobs deliver to (jobs sharing an output folder, whose
 * file names the folder keeps distinct): the manifest there lists every job's
 * delivered outputs, not only the last job's. Before anything is sent, the
 * destination's manifest is read: the other jobs' rows are kept in the
 * manifest this delivery writes, and an object of theirs that this delivery
 * would overwrite (two folders with the same file names, one prefix) refuses
 * the delivery, nothing sent.
 *
 * Read, then written after the files: two jobs delivering to one prefix at
 * the same instant may each write the manifest without the other's rows (the
 * next delivery of either puts them back). An assumption, not a guarantee:
 * S3's conditional writes would close that window; not every compatible
 * store has them.
 */
import { objectKey, type S3Destination } from '../job/index.js';
import { isRowOfJob, type ManifestRow, manifestRowsOfText } from '../outputs/index.js';
import { sidecarPathOf } from '../provenance/index.js';
import type { Logger } from '../shared/index.js';
import { DeliveryConflictError } from './errors.js';
import { manifestKey } from './objects.js';
import type { ObjectStore, StoreObject } from './s3-store.js';

/**
 * The rows of other jobs in the destination's manifest, in its order.
 * Throws DeliveryConflictError when one of `ours` would overwrite an object
 * one of those rows names.
 */
export async function otherJobsRows(
  store: ObjectStore,
  destination: S3Destination,
  jobName: string,
  ours: readonly StoreObject[],
  logger: Pick<Logger, 'warn'>,
  signal?: AbortSignal,
): Promise<ManifestRow[]> {
  const key = manifestKey(destination);
  const text = await store.read(destination.bucket, key, signal);
  if (text === 'forbidden') {
    // A missing key looks the same to credentials without s3:ListBucket: a warning, not a stop.
    logger.warn(
      { key },
      `s3://${destination.bucket}/${key} could not be read (HTTP 403: there is none, or these credentials may not read it): if other jobs deliver to this prefix, the manifest written leaves out their rows and their objects are not checked before being overwritten (docs/deliver.md, "Permissions")`,
    );
    return [];
  }
  if (text === 'missing') return [];
  const others = manifestRowsOfText(text.toString('utf8')).filter(
    (row) => !isRowOfJob(row, jobName),
  );
  const theirs = new Map<string, string>();
  for (const row of others) {
    if (!row.file) continue;
    for (const file of [row.file, sidecarPathOf(row.file)]) {
      theirs.set(objectKey(destination, file), row.job ?? '');
    }
  }
  const taken = ours.find((object) => theirs.has(object.key));
  if (taken) {
    const job = theirs.get(taken.key);
    throw new DeliveryConflictError(
      `s3://${destination.bucket}/${taken.key} is an output the job "${job}" delivered (its manifest there names it): ` +
        `the job "${jobName}" would overwrite it, so nothing was sent. Deliver each job to its own prefix ` +
        `(for example s3://${destination.bucket}/${objectKey(destination, jobName)}), or run both jobs into one output folder, which keeps their file names apart`,
    );
  }
  return others;
}
