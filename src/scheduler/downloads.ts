/**
 * Downloads recorded outputs into the output folder with bounded concurrency,
 * named by the step's template and kept inside the folder whatever the
 * server returns; each finished file is committed to the journal and appended
 * to the manifest. Outputs the journal records as downloaded are never
 * fetched again, and their files are not re-hashed: a resume trusts the
 * journal (the sha256 it holds is for the manifest and report). An output
 * whose download was cut off is still pending and is fetched again in full;
 * its stale temp file is removed first.
 */
import { type Dirent, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import PQueue from 'p-queue';
import type { JobItem, LoadedStep } from '../job/index.js';
import { ATTEMPT_STATE, ITEM_STATE, OUTPUT_STATE, type OutputRecord } from '../journal/index.js';
import {
  downloadOutput,
  type ManifestRow,
  type ManifestWriter,
  ProtectedPathError,
  planOutputFile,
  resolveInside,
} from '../outputs/index.js';
import { sha256Hex } from '../shared/index.js';
import { messageOf } from './classify.js';
import type { RunContext } from './context.js';

/** Largest output file accepted (videos included). */
export const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

export class DownloadStage {
  readonly #queue: PQueue;
  readonly #queued = new Set<string>();
  #claims: Map<string, string> | undefined;
  #failures = 0;

  constructor(
    private readonly ctx: RunContext,
    private readonly manifest: ManifestWriter,
    private readonly items: ReadonlyMap<string, JobItem>,
    private readonly steps: ReadonlyMap<string, LoadedStep>,
    concurrency: number,
  ) {
    this.#queue = new PQueue({ concurrency });
  }

  get failures(): number {
    return this.#failures;
  }

  /** Queues every output not downloaded yet, failed ones included (on start, after a resume). */
  enqueuePending(): void {
    const { journal, runId } = this.ctx;
    removeStalePartFiles(this.ctx.outputDir);
    for (const output of [
      ...journal.listOutputs(runId, OUTPUT_STATE.pending),
      ...journal.listOutputs(runId, OUTPUT_STATE.failed),
    ]) {
      // An item failed for good (a protected name) keeps its failed outputs.
      if (journal.getItem(runId, output.itemKey)?.state === ITEM_STATE.failed) continue;
      this.#enqueue(output);
    }
  }

  /** Queues the pending outputs of one item (just succeeded). */
  enqueueItem(itemKey: string): void {
    for (const output of this.ctx.journal.listOutputs(this.ctx.runId, OUTPUT_STATE.pending)) {
      if (output.itemKey === itemKey) this.#enqueue(output);
    }
  }

  /** Resolves when every queued download has finished. */
  async drain(): Promise<void> {
    await this.#queue.onIdle();
  }

  #enqueue(output: OutputRecord): void {
    const id = `${output.itemKey}\u0000${output.n}`;
    if (this.#queued.has(id) || !output.url) return;
    this.#queued.add(id);
    void this.#queue.add(() => this.#download(output));
  }

  async #download(output: OutputRecord): Promise<void> {
    const { ctx } = this;
    const item = this.items.get(output.itemKey);
    const step = item ? this.steps.get(item.stepId) : undefined;
    if (!item || !step || !output.url) return;
    let relative = '';
    try {
      const result = await downloadOutput({
        url: output.url,
        maxBytes: MAX_OUTPUT_BYTES,
        signal: ctx.stop.hardStop.signal,
        protectedPaths: ctx.protectedPaths,
        dest: (type) => {
          const planned = planOutputFile(ctx.outputDir, step.filename, {
            step: step.id,
            item: item.key,
            n: output.n,
            ext: type.ext,
            model: item.modelId,
            label: item.label,
            generationId: output.generationId ?? '',
            kind: item.kind,
            vars: item.vars as Record<string, string | number | boolean | null>,
          });
          relative = this.#claim(planned.relative, `${output.itemKey}\u0000${output.n}`);
          return relative === planned.relative
            ? planned.absolute
            : resolveInside(ctx.outputDir, relative);
        },
      });
      relative ||= path.relative(ctx.outputDir, result.path).split(path.sep).join('/');
      ctx.journal.markOutputDownloaded(ctx.runId, output.itemKey, output.n, {
        file: relative,
        sha256: result.sha256,
        bytes: result.bytes,
        contentType: result.contentType,
      });
      this.manifest.append(
        this.#row(item, output, {
          file: relative,
          sha256: result.sha256,
          bytes: result.bytes,
          contentType: result.contentType,
        }),
      );
    } catch (error) {
      if (ctx.stop.hardStop.signal.aborted) return;
      const message = messageOf(error);
      ctx.journal.markOutputFailed(ctx.runId, output.itemKey, output.n, message);
      if (error instanceof ProtectedPathError) {
        // The name is the job's mistake, not the network's: running again
        // would refuse again, so the item fails for good (its charge stays
        // in the journal) instead of asking for a resume.
        ctx.journal.setItemState(ctx.runId, output.itemKey, {
          state: ITEM_STATE.failed,
          error: message,
        });
      } else this.#failures += 1;
      ctx.record(
        'output.failed',
        `download of ${item.stepId}/${item.label} #${output.n} failed: ${message}`,
        item.key,
      );
    }
  }

  /**
   * Two outputs whose template values clean up to the same name (a template
   * without `{item}`, or values like `a/b` and `a_b`) must not overwrite each
   * other: the later one gets a short suffix unique to it.
   */
  #claim(relative: string, owner: string): string {
    if (!this.#claims) {
      this.#claims = new Map();
      for (const o of this.ctx.journal.listOutputs(this.ctx.runId, OUTPUT_STATE.downloaded)) {
        if (o.file) this.#claims.set(o.file, `${o.itemKey}\u0000${o.n}`);
      }
    }
    const holder = this.#claims.get(relative);
    if (holder !== undefined && holder !== owner) {
      const ext = path.posix.extname(relative);
      const suffix = sha256Hex(owner).slice(0, 8);
      relative = `${relative.slice(0, relative.length - ext.length)}-${suffix}${ext}`;
    }
    this.#claims.set(relative, owner);
    return relative;
  }

  #row(
    item: JobItem,
    output: OutputRecord,
    file: { file: string; sha256: string; bytes: number; contentType: string },
  ): ManifestRow {
    const record = this.ctx.journal.getItem(this.ctx.runId, item.key);
    const winning = this.ctx.journal
      .listAttempts(this.ctx.runId, item.key)
      .find((a) => a.state === ATTEMPT_STATE.succeeded);
    const prompt = item.request.input.prompt;
    return {
      runId: this.ctx.runId,
      step: item.stepId,
      item: item.key,
      n: output.n,
      attempt: record?.attemptsUsed,
      generationId: output.generationId,
      kind: item.kind,
      modelId: item.modelId,
      label: item.label,
      ...(typeof prompt === 'string' ? { prompt } : {}),
      status: ITEM_STATE.succeeded,
      // Per generation, like the rows rebuilt from the journal at the end.
      creditsCost: winning ? winning.chargedCost / Math.max(1, winning.generationIds.length) : null,
      refunded: false,
      url: output.url,
      ...file,
      at: new Date().toISOString(),
    };
  }
}

/**
 * A process killed mid-download (kill -9) leaves its `.<name>.part-<hex>`
 * temp file behind (see src/outputs/download.ts); the download is redone
 * under a new temp name, so remove the orphans once, before any download of
 * this process starts (one process per journal owns the folder).
 */
function removeStalePartFiles(dir: string): void {
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { recursive: true, withFileTypes: true });
  } catch {
    return; // no output folder yet
  }
  for (const entry of entries) {
    if (entry.isFile() && /^\..+\.part-[0-9a-f]{12}$/.test(entry.name)) {
      rmSync(path.join(entry.parentPath, entry.name), { force: true });
    }
  }
}
