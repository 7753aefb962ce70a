/**
 * The outputs a reader (`review`, `export`, `deliver`) lists that another
 * machine downloaded (a shared PostgreSQL journal): fetched into this
 * machine's output folder from the output URL the journal holds, through
 * the same download as the run's repair path (provenance embedded the same
 * deterministic way), and kept only when the bytes hash to the sha256 the
 * journal (and the manifest) recorded. A file already here with those bytes
 * is left alone; another file at that name is never replaced. docs/journal.md,
 * "Reading from a third machine".
 */
import { rm } from 'node:fs/promises';
import { type Journal, OUTPUT_STATE, type OutputRecord } from '../journal/index.js';
import {
  type ManifestRow,
  partFileTag,
  recordedElsewhere,
  resolveInside,
} from '../outputs/index.js';
import { EXIT, IbatchError } from '../shared/index.js';
import { hashFile } from '../uploads/index.js';
import { messageOf } from './classify.js';
import { damageOf } from './download-checks.js';
import { MAX_OUTPUT_BYTES } from './download-context.js';
import { downloadRetrying } from './download-retries.js';
import { provenanceEmbedder } from './provenance.js';

/** An output of another machine that could not be fetched here with its recorded bytes. */
export class OutputFetchError extends IbatchError {
  constructor(message: string) {
    super('output_fetch', message, EXIT.unreachable, { retryable: true });
  }
}

export interface FetchHereOptions {
  readonly signal?: AbortSignal;
  /** Paths a fetched file may never land on (the job file, the journal). */
  readonly protectedPaths?: readonly string[];
}

/** Fetches the listed outputs of other machines' runs that `outputDir` lacks; returns how many. */
export async function fetchOutputsHere(
  journal: Journal,
  jobName: string,
  outputDir: string,
  rows: readonly ManifestRow[],
  options: FetchHereOptions = {},
): Promise<number> {
  let fetched = 0;
  for (const output of elsewhereOutputs(journal, rows)) {
    const file = output.file ?? '';
    const dest = resolveInside(outputDir, file);
    if ((await damageOf(dest, output)) === undefined) continue;
    if (!output.url || !output.sha256)
      throw new OutputFetchError(
        `${file} is on another machine and the journal holds no URL for it`,
      );
    try {
      const result = await downloadRetrying(
        {
          url: output.url,
          dest,
          maxBytes: MAX_OUTPUT_BYTES,
          partTag: partFileTag(jobName),
          embed: provenanceEmbedder(journal, output),
          ...(options.signal ? { signal: options.signal } : {}),
          ...(options.protectedPaths ? { protectedPaths: options.protectedPaths } : {}),
        },
        options.signal ?? new AbortController().signal,
      );
      if (result.sha256 !== output.sha256) {
        await rm(result.path, { force: true });
        throw new Error(`its bytes hash to ${result.sha256}, the manifest says ${output.sha256}`);
      }
    } catch (error) {
      // The file may already be here from a fetch killed after its move.
      if ((await hashFile(dest).catch(() => undefined)) === output.sha256) continue;
      throw new OutputFetchError(
        `${file} (run ${output.runId}) could not be fetched from the service: ${messageOf(error)}`,
      );
    }
    fetched += 1;
  }
  return fetched;
}

/** The journal's outputs behind `rows` that a run on another machine downloaded. */
function elsewhereOutputs(journal: Journal, rows: readonly ManifestRow[]): OutputRecord[] {
  const byRun = new Map<string, ManifestRow[]>();
  for (const row of rows) {
    if (row.file === undefined || row.runId === undefined) continue;
    byRun.set(row.runId, [...(byRun.get(row.runId) ?? []), row]);
  }
  const outputs: OutputRecord[] = [];
  for (const [runId, listed] of byRun) {
    const run = journal.getRun(runId);
    if (!run || recordedElsewhere(run) === undefined) continue;
    const files = new Set(listed.map((row) => row.file));
    for (const output of journal.listOutputs(runId, OUTPUT_STATE.downloaded))
      if (files.has(output.file ?? undefined)) outputs.push(output);
  }
  return outputs;
}
