/**
 * The job's local input files, checked before anything is spent: every file
 * a run needs is read once (type sniffed from the bytes, size within the
 * service's limit) and its content hash kept, which is also what an item's
 * identity hash names a file by. Uploading them is the engine's (assets.ts).
 */
import { type MediaCategory, TRAINING_IMAGE_TYPES } from '../../contract/index.js';
import type { JobItem, LoadedJob, MediaRef } from '../../job/index.js';
import { type PreparedUpload, prepareUpload } from '../../uploads/index.js';

export interface PreparedFiles {
  readonly byPath: ReadonlyMap<string, PreparedUpload>;
}

/** Checks every local file the job names; throws UploadRejectedError (exit 2) on the first bad one. */
export async function prepareJobFiles(
  job: LoadedJob,
  items: Iterable<Pick<JobItem, 'mediaRefs'>>,
): Promise<PreparedFiles> {
  const wanted = new Map<string, { allowed?: readonly MediaCategory[]; training: boolean }>();
  for (const influencer of job.influencers.values()) {
    if (!('uploadSet' in influencer.images)) continue;
    for (const file of job.uploads.get(influencer.images.uploadSet)?.files ?? []) {
      wanted.set(file, { training: true });
    }
  }
  for (const item of items) {
    for (const ref of item.mediaRefs) {
      const file = localPathOf(job, ref);
      if (!wanted.has(file)) wanted.set(file, { training: false });
    }
  }
  const byPath = new Map<string, PreparedUpload>();
  for (const [file, use] of wanted) {
    byPath.set(
      file,
      await prepareUpload(file, use.training ? { allowedTypes: TRAINING_IMAGE_TYPES } : {}),
    );
  }
  return { byPath };
}

export function localPathOf(job: LoadedJob, ref: MediaRef): string {
  if (typeof ref.path === 'string') return ref.path;
  const { uploadSet, file } = ref.path;
  const set = job.uploads.get(uploadSet);
  const match = set?.files.find((f) => f === file) ?? file;
  return match;
}
