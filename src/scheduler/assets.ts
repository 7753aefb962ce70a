/**
 * Local files -> owned asset URLs. Every file a run needs is checked first
 * (decide/input-files.ts) so a bad file stops the run before anything is
 * spent. Uploads are then reused by
 * content hash: a file uploaded before to the same account (this run, an
 * earlier one, a resumed one) is not uploaded again; an edited file is.
 */
import { relative } from 'node:path';
import { prepareUpload, uploadWithPresign } from '../uploads/index.js';
import type { RunContext } from './context.js';
import type { PreparedFiles } from './decide/input-files.js';

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
