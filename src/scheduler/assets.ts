/**
 * Local files -> owned asset URLs. Every file a run needs is checked first
 * (type sniffed from the bytes, size within the service's limit) so a bad
 * file stops the run before anything is spent. Uploads are then reused by
 * content hash: a file uploaded before to the same account (this run, an
 * earlier one, a resumed one) is not uploaded again; an edited file is.
 */
import { relative } from 'node:path';
import { type MediaCategory, TRAINING_IMAGE_TYPES } from '../contract/index.js';
import type { JobItem, LoadedJob, MediaRef } from '../job/index.js';
import { type PreparedUpload, prepareUpload, uploadWithPresign } from '../uploads/index.js';
import type { RunContext } from './context.js';

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

export class AssetResolver {
  readonly #inFlight = new Map<string, Promise<string>>();
  #uploaded = 0;
  #reused = 0;

  constructor(
    private readonly ctx: RunContext,
    private readonly files: PreparedFiles,
  ) {}

  get counts(): { uploaded: number; reused: number } {
    return { uploaded: this.#uploaded, reused: this.#reused };
  }

  /** The asset URL of a local file, uploading it once if needed. */
  urlFor(path: string): Promise<string> {
    let pending = this.#inFlight.get(path);
    if (!pending) {
      pending = this.#resolve(path);
      pending.catch(() => this.#inFlight.delete(path));
      this.#inFlight.set(path, pending);
    }
    return pending;
  }

  async #resolve(path: string): Promise<string> {
    const prepared = this.files.byPath.get(path) ?? (await prepareUpload(path));
    const { journal, scope, client } = this.ctx;
    const known = journal.findAsset(scope, prepared.sha256);
    if (known) {
      this.#reused += 1;
      return known.assetUrl;
    }
    const signal = this.ctx.stop.hardStop.signal;
    const assetUrl = await uploadWithPresign(
      prepared,
      (request) => client.presignAsset(request, { signal }),
      async (presign, file) => {
        await client.upload(presign, file.path, { sizeBytes: file.sizeBytes, signal });
      },
    );
    journal.recordAsset({
      scope,
      sha256: prepared.sha256,
      mimeType: prepared.mime,
      size: prepared.sizeBytes,
      assetUrl,
    });
    this.#uploaded += 1;
    // Relative to the job: the timeline ends up in a shareable report.
    const shown = relative(this.ctx.job.dir, path) || path;
    this.ctx.record('asset.uploaded', `uploaded ${shown}`, undefined, { sha256: prepared.sha256 });
    return assetUrl;
  }
}
