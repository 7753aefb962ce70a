/**
 * What the download stage does for an output already downloaded: restore
 * its file when it is missing or was edited (from the URL the journal
 * holds), finish a move aside a kill interrupted, and write its provenance
 * sidecar (also after a fresh download).
 */

import type { OutputRecord } from '../journal/index.js';
import { resolveInside } from '../outputs/index.js';
import { sidecarPathOf } from '../provenance/index.js';
import { messageOf } from './classify.js';
import { damageOf, exists } from './download-checks.js';
import {
  type DownloadContext,
  outputDownloadOptions,
  type RepairResult,
} from './download-context.js';
import { downloadRetrying } from './download-retries.js';
import { finishInterruptedMove } from './move-aside.js';
import { asideNameOf } from './output-names.js';
import {
  type DownloadFacts,
  type KnownOutput,
  provenanceEmbedder,
  writeOutputSidecar,
} from './provenance.js';

/** Restores one downloaded output when its file is damaged; undefined when it is fine. */
export async function repairOutput(
  ctx: DownloadContext,
  output: OutputRecord,
): Promise<keyof RepairResult | undefined> {
  const file = output.file ?? '';
  let problem: string | undefined;
  let dest = '';
  try {
    dest = resolveInside(ctx.outputDir, file);
    problem = await damageOf(dest, output);
  } catch (error) {
    problem = messageOf(error);
  }
  if (ctx.stop.hardStop.signal.aborted) return undefined;
  if (problem === 'missing' && (await finishMove(ctx, output))) return undefined;
  if (!problem) {
    // A sidecar lost (or never written: a kill right after the journal
    // recorded the file) is written again from the journal.
    if (!(await exists(sidecarPathOf(dest)))) await writeSidecar(ctx, output);
    return undefined;
  }
  try {
    if (!dest || !output.url) throw new Error('no safe name or URL to download it again from');
    const result = await downloadRetrying(
      {
        ...outputDownloadOptions(ctx, output.url),
        dest,
        // The file is this output's own (the journal says so): restore it.
        existing: 'replace',
        embed: provenanceEmbedder(ctx.journal, output),
      },
      ctx.stop.hardStop.signal,
    );
    ctx.journal.markOutputDownloaded(output.runId, output.itemKey, output.n, {
      file,
      sha256: result.sha256,
      bytes: result.bytes,
      contentType: result.contentType,
    });
    ctx.record('output.repaired', `${file} was ${problem}: downloaded again`, output.itemKey);
    await writeSidecar(ctx, output, result);
    return 'repaired';
  } catch (error) {
    if (ctx.stop.hardStop.signal.aborted) return undefined;
    const message = `${file} is ${problem} and cannot be downloaded again: ${messageOf(error)}`;
    ctx.record('output.lost', message, output.itemKey, { runId: output.runId, n: output.n });
    ctx.emit({ type: 'warning', message });
    return 'lost';
  }
}

/**
 * A file missing at its recorded name that sits at its aside name: a move
 * aside (move-aside.ts) killed before the journal learnt it. Records it.
 */
async function finishMove(ctx: DownloadContext, output: OutputRecord): Promise<boolean> {
  if (!output.file) return false;
  const aside = asideNameOf(output.file, output);
  if (!(await finishInterruptedMove(ctx.journal, ctx.outputDir, output, aside))) return false;
  ctx.record('output.moved', `${output.file} was moved aside to ${aside}`, output.itemKey);
  return true;
}

/**
 * Writes the provenance sidecar of a downloaded output. Never replaces a
 * file, and never fails the output: the file is recorded already, and the
 * next run's check writes a missing sidecar again.
 */
export async function writeSidecar(
  ctx: DownloadContext,
  output: OutputRecord,
  facts?: DownloadFacts,
  known?: KnownOutput,
): Promise<void> {
  try {
    if (await writeOutputSidecar(ctx.journal, ctx.outputDir, output, facts, known)) return;
    const message = `the provenance sidecar of ${output.file ?? output.itemKey} was not written: a file already has its name`;
    ctx.record('output.sidecar_exists', message, output.itemKey);
    ctx.emit({ type: 'warning', message });
  } catch (error) {
    const message = `the provenance sidecar of ${output.file ?? output.itemKey} was not written: ${messageOf(error)}`;
    ctx.record('output.sidecar_failed', message, output.itemKey);
    ctx.emit({ type: 'warning', message });
  }
}
