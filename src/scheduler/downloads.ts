/**
 * Downloads recorded outputs into the output folder with bounded concurrency,
 * named by the step's template and kept inside the folder whatever the
 * server returns; each finished file is committed to the journal and appended
 * to the manifest. A file already in the folder is never replaced: a name
 * taken by another output (of any run writing here) or by a file no record
 * owns gets a unique suffix (see OutputNames). Outputs the journal records as
 * downloaded are not fetched again and, in a run, not re-hashed;
 * `verifyAndRepair` checks them cheaply and restores what is missing or was
 * edited. An output whose download was cut off is still pending and is
 * fetched again in full; its stale temp file is removed first. The stage
 * works on outputs of any run (each carries its `runId`), so the engine can
 * hand it those of items done in earlier runs.
 */
import path from 'node:path';
import PQueue from 'p-queue';
import type { JobItem, LoadedStep } from '../job/index.js';
import { ITEM_STATE, type Journal, OUTPUT_STATE, type OutputRecord } from '../journal/index.js';
import {
  type DescribedItems,
  diskFullCode,
  downloadedOutputRow,
  type ManifestWriter,
  OutputDiskFullError,
  partFileTag,
  planOutputFile,
  readOutputFacts,
  resolveInside,
} from '../outputs/index.js';
import { messageOf } from './classify.js';
import { failsForGood, isLocalProblem, removeStalePartFiles } from './download-checks.js';
import {
  type DownloadContext,
  outputDownloadOptions,
  type RepairResult,
} from './download-context.js';
import { downloadRetrying } from './download-retries.js';
import { moveAside } from './move-aside.js';
import { OutputNames, outputOwner } from './output-names.js';
import { provenanceEmbedder } from './provenance.js';
import { repairOutput, writeSidecar } from './repair-output.js';

export class DownloadStage {
  readonly #queue: PQueue;
  readonly #queued = new Set<string>();
  readonly #names: OutputNames;
  /** The removal of this job's stale temp files (`removeStalePartFiles`), once started. */
  #partsRemoved: Promise<void> | undefined;
  /** Each run's job, read once: a run's job never changes. */
  readonly #jobOfRun = new Map<string, string | undefined>();
  #failures = 0;
  #localProblem: string | undefined;
  #backlog = 0;
  #peakBacklog = 0;
  #room: { readonly bound: number; readonly listener: () => void } | undefined;

  constructor(
    private readonly ctx: DownloadContext,
    private readonly manifest: ManifestWriter,
    /** The job file's whole items of these keys (asked once per batch of outputs). */
    private readonly items: (keys: ReadonlySet<string>) => ReadonlyMap<string, JobItem>,
    private readonly steps: ReadonlyMap<string, LoadedStep>,
    concurrency: number,
    /** The items the job file describes (an output of any other is retired). */
    private readonly described?: DescribedItems,
  ) {
    this.#queue = new PQueue({ concurrency });
    this.#names = new OutputNames(ctx.journal, ctx.outputDir, ctx.runId);
  }

  get failures(): number {
    return this.#failures;
  }

  /** Downloads queued or going (the run's wait reports). */
  get waiting(): number {
    return this.#queue.size + this.#queue.pending;
  }

  /**
   * Outputs queued to download and not finished yet (checks of files
   * downloaded before are not counted): what the run holds for downloads
   * that fall behind its creates.
   */
  get backlog(): number {
    return this.#backlog;
  }

  /** The largest `backlog` of the stage's life. */
  get peakBacklog(): number {
    return this.#peakBacklog;
  }

  /** Calls `listener` each time the backlog falls below `bound` again (once it is not full). */
  onRoomBelow(bound: number, listener: () => void): void {
    this.#room = { bound, listener };
  }

  /** The first download the local folder refused (a link out of it, a permission), if any. */
  get localProblem(): string | undefined {
    return this.#localProblem;
  }

  /** Queues every output of this run not downloaded yet, failed ones included (on start, after a resume). */
  enqueuePending(): void {
    this.#queueUnfinished(outputsLeftToDownload(this.ctx.journal, this.ctx.runId));
  }

  /** Queues the pending outputs of one item of this run (just succeeded). */
  enqueueItem(item: JobItem): void {
    for (const output of this.ctx.journal.listOutputs(
      this.ctx.runId,
      OUTPUT_STATE.pending,
      item.key,
    )) {
      this.#enqueue(output, item);
    }
  }

  /**
   * Checks the files of `pages` of outputs (of any run) recorded as downloaded and
   * downloads again, to the same name, those missing, of another size, or
   * changed since they were recorded (a file is hashed only when its mtime is
   * newer than the record: a large folder is not re-read every night). An
   * output whose URL no longer serves it is reported (`output.lost` and a
   * warning) and counted, never fatal. Outputs not downloaded yet are queued
   * like `enqueuePending` does (`drain` waits for them). Resolves when every
   * check and repair has finished.
   */
  async verifyAndRepair(pages: Iterable<readonly OutputRecord[]>): Promise<RepairResult> {
    const partsRemoved = this.#removeStalePartsOnce();
    const counts = { repaired: 0, lost: 0 };
    // A page at a time: a resume of a large run holds no record or check of
    // every done output at once. A stopped run checks no further page.
    for (const outputs of pages) {
      if (this.ctx.stop.hardStop.signal.aborted) break;
      const checks: Promise<void>[] = [];
      const unfinished: OutputRecord[] = [];
      for (const output of outputs) {
        if (output.state !== OUTPUT_STATE.downloaded) {
          unfinished.push(output);
          continue;
        }
        checks.push(
          this.#queue.add(async () => {
            await partsRemoved;
            const verdict = await repairOutput(this.ctx, output);
            if (verdict) counts[verdict] += 1;
          }),
        );
      }
      this.#queueUnfinished(unfinished);
      await Promise.all(checks);
    }
    return counts;
  }

  /** Resolves when every queued download has finished. */
  async drain(): Promise<void> {
    await this.#queue.onIdle();
  }

  #queueUnfinished(outputs: readonly OutputRecord[]): void {
    void this.#removeStalePartsOnce();
    const queued = withoutFailedItems(this.ctx.journal, outputs);
    if (queued.length === 0) return;
    const items = this.items(new Set(queued.map((output) => output.itemKey)));
    for (const output of queued) {
      const item = items.get(output.itemKey);
      if (item) this.#enqueue(output, item);
    }
  }

  /**
   * Once per stage, started when its first output is queued or checked: a
   * process killed mid-download left temp files whose downloads are redone
   * under new temp names. Every download and repair waits for it.
   */
  #removeStalePartsOnce(): Promise<void> {
    this.#partsRemoved ??= removeStalePartFiles(this.ctx.outputDir, partFileTag(this.ctx.job.name));
    return this.#partsRemoved;
  }

  /** `item`: the job file's item the output is of (its file name is made from it). */
  #enqueue(output: OutputRecord, item: JobItem): void {
    const id = outputOwner(output);
    // No URL: a copy the service failed, nothing to download.
    if (this.#queued.has(id) || !output.url) return;
    this.#queued.add(id);
    this.#backlog += 1;
    this.#peakBacklog = Math.max(this.#peakBacklog, this.#backlog);
    // Once done it is recorded downloaded (or failed): only a queued one needs noting.
    void this.#queue.add(() => this.#download(output, item).finally(() => this.#ended(id)));
  }

  #ended(id: string): void {
    this.#queued.delete(id);
    this.#backlog -= 1;
    // The backlog shrinks one at a time: it crossed below the bound just now.
    if (this.#backlog === (this.#room?.bound ?? 0) - 1) this.#room?.listener();
  }

  #jobOf(runId: string): string | undefined {
    if (!this.#jobOfRun.has(runId))
      this.#jobOfRun.set(runId, this.ctx.journal.getRun(runId)?.jobName);
    return this.#jobOfRun.get(runId);
  }

  async #download(output: OutputRecord, item: JobItem): Promise<void> {
    const { ctx } = this;
    const step = this.steps.get(item.stepId);
    if (!step || !output.url) return;
    const owner = outputOwner(output);
    let planned = '';
    const inside = (relative: string) => resolveInside(ctx.outputDir, relative);
    try {
      // The manifest's rows on disk are read in slices meanwhile, and stale
      // temp files removed (a resume's first create does not wait for
      // them): the file waits for them instead.
      await this.#removeStalePartsOnce();
      await this.manifest.ready();
      // Read once for the embedded facts, the manifest row and the sidecar:
      // the item's request and model do not change once it has outputs.
      const stored = ctx.journal.getItem(output.runId, output.itemKey);
      const known = { ...(stored ? { item: stored } : {}), job: this.#jobOf(output.runId) };
      const result = await downloadRetrying(
        {
          ...outputDownloadOptions(ctx, output.url),
          embed: provenanceEmbedder(ctx.journal, output, known),
          dest: (type) => {
            planned = planOutputFile(ctx.outputDir, step.filename, {
              step: step.id,
              item: item.key,
              n: output.n,
              ext: type.ext,
              model: item.modelId,
              label: item.label,
              name: item.name,
              generationId: output.generationId ?? '',
              kind: item.kind,
              vars: item.vars as Record<string, string | number | boolean | null>,
            }).relative;
            // The readable name goes to this, the newest output of its item: an
            // older output of the item holding it is moved aside first.
            return inside(
              this.#names.claimReadable(
                planned,
                output,
                (held, aside) => moveAside(ctx.journal, ctx.outputDir, held, planned, aside),
                this.described,
              ),
            );
          },
          // The name holds a file no record owns (a user's): never replaced.
          alternative: (taken) => {
            this.#names.takenOnDisk(this.#relative(taken));
            return inside(this.#names.claim(planned, owner));
          },
        },
        ctx.stop.hardStop.signal,
      );
      const file = {
        file: this.#relative(result.path),
        sha256: result.sha256,
        bytes: result.bytes,
        contentType: result.contentType,
      };
      const marked = ctx.journal.markOutputDownloaded(output.runId, output.itemKey, output.n, file);
      const read = readOutputFacts(ctx.journal, output, {
        ...known,
        ...(marked ? { output: marked } : {}),
      });
      const row = read && downloadedOutputRow(ctx.journal, read);
      if (row) this.manifest.append(row);
      await writeSidecar(this.ctx, output, result, { read, row });
    } catch (error) {
      if (ctx.stop.hardStop.signal.aborted) return;
      // The file, or its manifest line, found no room on the disk.
      const errno = error instanceof OutputDiskFullError ? error.errno : diskFullCode(error);
      if (errno) {
        // Neither the output's fault nor the network's: stop, and the resume
        // downloads it again (it stays pending) once there is room.
        const full = new OutputDiskFullError(ctx.outputDir, errno, { cause: error });
        ctx.record('output.disk_full', full.message, item.key);
        ctx.stop.stop('unreachable', full.message, undefined, OutputDiskFullError.NEXT_STEP);
        return;
      }
      const message = messageOf(error);
      ctx.journal.markOutputFailed(output.runId, output.itemKey, output.n, message);
      if (isLocalProblem(error)) {
        // Paid for, and the local folder refused it: neither the network
        // (retrying changes nothing) nor the output (the next run would pay
        // again). It stays to download; the run ends asking for the fix.
        this.#localProblem ??= message;
        ctx.record(
          'output.failed',
          `${item.stepId}/${item.label} #${output.n}: ${message}`,
          item.key,
        );
        return;
      }
      if (failsForGood(error)) {
        // Fetching again cannot help (a protected name, a URL that is no
        // http(s) download, another origin, a 4xx, bytes that are no media):
        // the item fails for good (its charge stays in the journal, the
        // manifest lists the output with the reason) instead of asking for a
        // resume that would fail the same way; the next `run` makes it again.
        ctx.journal.setItemState(output.runId, output.itemKey, {
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

  /** The POSIX path of `absolute` relative to the output folder (what the journal records). */
  #relative(absolute: string): string {
    return path.relative(this.ctx.outputDir, absolute).split(path.sep).join('/');
  }
}

/**
 * The outputs of run `runId` not downloaded yet, pending or failed before,
 * which its start queues (`enqueuePending`) once `withoutFailedItems` took
 * out those kept failed; a resume's check keeps their items whole.
 */
export function outputsLeftToDownload(
  journal: Pick<Journal, 'listOutputs'>,
  runId: string,
): OutputRecord[] {
  return [
    ...journal.listOutputs(runId, OUTPUT_STATE.pending),
    ...journal.listOutputs(runId, OUTPUT_STATE.failed),
  ];
}

/** `outputs` but those of items failed for good (a protected name): they keep their failed outputs. */
export function withoutFailedItems(
  journal: Pick<Journal, 'itemKeysInState'>,
  outputs: readonly OutputRecord[],
): OutputRecord[] {
  const failed = new Set<string>();
  for (const [runId, keys] of itemKeysByRun(outputs))
    for (const key of journal.itemKeysInState(runId, keys, ITEM_STATE.failed))
      failed.add(`${runId}\n${key}`);
  return outputs.filter((output) => !failed.has(`${output.runId}\n${output.itemKey}`));
}

/** The item keys of `outputs`, by run, each once. */
function itemKeysByRun(outputs: readonly OutputRecord[]): Map<string, string[]> {
  const byRun = new Map<string, Set<string>>();
  for (const { runId, itemKey } of outputs) {
    const keys = byRun.get(runId) ?? new Set<string>();
    byRun.set(runId, keys.add(itemKey));
  }
  return new Map([...byRun].map(([runId, keys]) => [runId, [...keys]]));
}
