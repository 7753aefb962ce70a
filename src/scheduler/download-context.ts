/** What the download stage and the repair of earlier outputs share. */
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
