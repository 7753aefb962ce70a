/**
 * Provenance of downloaded outputs, from the journal (the source of truth):
 * the facts embedded in a file before it is put in place, and its sidecar
 * `<file>.json` written once the journal records the file. Both name the
 * same generation, model, prompt, job and run as the manifest row.
 */
import { readFile } from 'node:fs/promises';
import type { Journal, OutputRecord } from '../journal/index.js';
import {
  downloadedOutputRow,
  type ManifestRow,
  type OutputFacts,
  readOutputFacts,
  resolveInside,
  succeededAttempt,
} from '../outputs/index.js';
import {
  AI_DIGITAL_SOURCE_TYPE,
  type EmbeddedFacts,
  embedProvenance,
  IBATCH_XMP_NS,
  ownSidecarOf,
  type Provenance,
  writeSidecar,
} from '../provenance/index.js';
import { redactDeep } from '../shared/index.js';
import { VERSION } from '../version.js';

type OutputKey = Pick<OutputRecord, 'runId' | 'itemKey' | 'n' | 'generationId'>;

/**
 * `embed` for `downloadOutput`: the output's provenance written into its
 * bytes. `known`: the output's item and job when the caller read them.
 */
export function provenanceEmbedder(
  journal: Journal,
  output: OutputKey,
  known: Pick<Partial<OutputFacts>, 'item' | 'job'> = {},
): (type: { mime: string }, served: Buffer) => Buffer | undefined {
  const facts = embeddedFactsOf(journal, output, known);
  return (type, served) => (facts ? embedProvenance(type.mime, served, facts) : undefined);
}

/** What the file itself says (deterministic: a resume rebuilds the very same bytes). */
function embeddedFactsOf(
  journal: Journal,
  output: OutputKey,
  known: Pick<Partial<OutputFacts>, 'item' | 'job'>,
): EmbeddedFacts | undefined {
  const item = known.item ?? journal.getItem(output.runId, output.itemKey);
  const job = 'job' in known ? known.job : journal.getRun(output.runId)?.jobName;
  if (!item || job === undefined) return undefined;
  return redactDeep({
    prompt: inputOf(item.request)?.prompt as string | undefined,
    modelId: item.modelId ?? '',
    generationId: output.generationId,
    job,
    runId: output.runId,
    creatorTool: `ibatch ${VERSION}`,
  });
}

/** What a download knows that the journal does not keep. */
export interface DownloadFacts {
  readonly servedSha256?: string;
  readonly embedded: boolean;
}

/** An output's journal facts and manifest row, when the caller has read them already. */
export interface KnownOutput {
  readonly read: OutputFacts | undefined;
  readonly row: ManifestRow | undefined;
}

/**
 * Writes the sidecar of a downloaded output unless one exists (never
 * replaced: outputs and what lies beside them are never overwritten).
 * Returns false when another file (not this output's sidecar) has the name.
 */
export async function writeOutputSidecar(
  journal: Journal,
  outputDir: string,
  output: Pick<OutputRecord, 'runId' | 'itemKey' | 'n'>,
  facts?: DownloadFacts,
  known?: KnownOutput,
): Promise<boolean> {
  const read = known ? known.read : readOutputFacts(journal, output);
  const row = known ? known.row : read && downloadedOutputRow(journal, read);
  if (!read || !row?.file || !row.sha256) return false;
  const { item, job } = read;
  if (job === undefined) return false;
  const file = resolveInside(outputDir, row.file);
  const winning = succeededAttempt(read.attempts);
  const sent = inputOf(winning?.request);
  const created = winning?.submittedAt ?? winning?.createdAt;
  const provenance: Provenance = {
    provenanceVersion: 1,
    ai_generated: true,
    digitalSourceType: AI_DIGITAL_SOURCE_TYPE,
    file: row.file,
    sha256: row.sha256,
    bytes: row.bytes ?? 0,
    contentType: row.contentType ?? '',
    ...(facts?.servedSha256 ? { servedSha256: facts.servedSha256 } : {}),
    embeddedMetadata: facts?.embedded ?? (await carriesOurXmp(file)),
    kind: row.kind,
    modelId: row.modelId,
    ...(row.prompt === undefined ? {} : { prompt: row.prompt }),
    input: inputOf(item.request) ?? {},
    ...(sent ? { sentInput: sent } : {}),
    ...(row.sourceFile ? { sourceFile: row.sourceFile } : {}),
    generationId: row.generationId,
    job,
    runId: output.runId,
    step: row.step,
    item: row.item,
    ...(row.label ? { label: row.label } : {}),
    n: row.n ?? output.n,
    ...(row.attempt ? { attempt: row.attempt } : {}),
    ...(row.vars ? { vars: row.vars } : {}),
    ...(created ? { createdAt: new Date(created).toISOString() } : {}),
    downloadedAt: row.at ?? new Date().toISOString(),
    creditsCost: row.creditsCost,
    refunded: row.refunded,
    generator: { name: 'ibatch', version: VERSION },
  };
  // A sidecar already there that is this output's (a repaired file whose
  // sidecar stayed) is kept, and nothing needs saying.
  return (
    (await writeSidecar(file, provenance)) || ownSidecarOf(outputDir, provenance) !== undefined
  );
}

function inputOf(request: unknown): Record<string, unknown> | undefined {
  const input = (request as { input?: unknown } | null)?.input;
  return input && typeof input === 'object' && !Array.isArray(input)
    ? (input as Record<string, unknown>)
    : undefined;
}

/** Whether a file (recorded before its sidecar was written) holds ibatch's XMP packet. */
async function carriesOurXmp(file: string): Promise<boolean> {
  try {
    return (await readFile(file)).includes(IBATCH_XMP_NS);
  } catch {
    return false;
  }
}
