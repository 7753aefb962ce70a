/** What the download stage and the repair of earlier outputs share. */
import { type DownloadOptions, partFileTag } from '../outputs/index.js';
import type { RunContext } from './context.js';

/** Largest output file accepted (videos included). */
export const MAX_OUTPUT_BYTES = 512 * 1024 * 1024;

/** What `verifyAndRepair` found: files downloaded again, and files whose URL no longer serves them. */
export interface RepairResult {
  readonly repaired: number;
  readonly lost: number;
}

/** What the download stage needs of a run (a no-op `run` repairs files with it too). */
export type DownloadContext = Pick<
  RunContext,
  'runId' | 'journal' | 'outputDir' | 'protectedPaths' | 'stop' | 'emit' | 'record'
> & { readonly job: Pick<RunContext['job'], 'name'> };

/** The options every download of a run's output takes: its URL, the size cap, the run's stop, its protected names. */
export function outputDownloadOptions(
  ctx: DownloadContext,
  url: string,
): Pick<DownloadOptions, 'url' | 'maxBytes' | 'signal' | 'protectedPaths' | 'partTag'> {
  return {
    url,
    maxBytes: MAX_OUTPUT_BYTES,
    signal: ctx.stop.hardStop.signal,
    protectedPaths: ctx.protectedPaths,
    partTag: partFileTag(ctx.job.name),
  };
}
