/**
 * The provenance sidecar: `<output file name>.json` beside every downloaded
 * output (e.g. `portraits/ava-1.png.json`), what the file is and how it was
 * made, for people and tools that do not read embedded metadata. Field names
 * follow the manifest's; `ai_generated` is spelled as the label is commonly
 * written. Its JSON Schema is `schema/provenance.schema.json`.
 */
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { PathEscapeError, resolveInside, writeFileExclusive } from '../outputs/index.js';
import { redactDeep } from '../shared/index.js';
import { AI_DIGITAL_SOURCE_TYPE } from './xmp.js';

/** The sidecar of `file` (a path or name): its full name plus `.json`. */
export const sidecarPathOf = (file: string): string => `${file}.json`;

const sha256 = z.string().regex(/^[0-9a-f]{64}$/);
const json = z.record(z.string(), z.unknown());

export const ProvenanceSchema = z.strictObject({
  /** Bumped when a field changes meaning. */
  provenanceVersion: z.literal(1),
  /** The file was made by a generative model. */
  ai_generated: z.literal(true),
  /** IPTC digital source type of the file (trained algorithmic media: AI-generated). */
  digitalSourceType: z.literal(AI_DIGITAL_SOURCE_TYPE),
  /** The output's path relative to the output folder, POSIX separators. */
  file: z.string().min(1),
  /** sha256 of the file as written (with embedded metadata): the manifest's `sha256`. */
  sha256,
  bytes: z.number().int().min(0),
  contentType: z.string(),
  /** sha256 of the bytes as the service served them, before metadata was embedded. */
  servedSha256: sha256.optional(),
  /** Whether the file itself carries the XMP provenance packet. */
  embeddedMetadata: z.boolean(),
  kind: z.enum(['image', 'video']),
  modelId: z.string(),
  prompt: z.string().optional(),
  /** The request's input as the job file wrote it (local media file names). */
  input: json,
  /** The input as sent to the service (uploaded media as asset URLs). */
  sentInput: json.optional(),
  /** For an output of a `from:` step: the file it was made from. */
  sourceFile: z.string().optional(),
  generationId: z.string().nullable(),
  job: z.string(),
  runId: z.string(),
  step: z.string(),
  item: z.string(),
  label: z.string().optional(),
  /** 1-based index of the output within its generation. */
  n: z.number().int().min(1),
  attempt: z.number().int().min(1).optional(),
  vars: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])).optional(),
  /** ISO 8601 time the generation was requested. */
  createdAt: z.string().optional(),
  /** ISO 8601 time the file was downloaded. */
  downloadedAt: z.string(),
  creditsCost: z.number().nullable(),
  refunded: z.boolean(),
  generator: z.strictObject({ name: z.literal('ibatch'), version: z.string() }),
});
export type Provenance = z.infer<typeof ProvenanceSchema>;

/** The published JSON Schema of sidecars (`schema/provenance.schema.json`, `ibatch schema --provenance`). */
export function provenanceJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(ProvenanceSchema, { io: 'input', target: 'draft-7' });
  return {
    ...schema,
    $id: 'https://github.com/influencer-batch/ibatch/schema/provenance.schema.json',
    title: 'ibatch provenance sidecar',
  };
}

/**
 * Writes the sidecar of the output at `file` (absolute), checked against the
 * schema and redacted; never replaces an existing file (false then).
 */
export async function writeSidecar(file: string, provenance: Provenance): Promise<boolean> {
  const checked = redactDeep(ProvenanceSchema.parse(provenance));
  return writeFileExclusive(sidecarPathOf(file), `${JSON.stringify(checked, null, 2)}\n`);
}

/** The output whose sidecar is looked for: a manifest row or a sidecar's own fields. */
export interface SidecarOwner {
  /** Relative to the output folder. */
  readonly file?: string | undefined;
  readonly runId?: string | undefined;
  readonly item: string;
  /** @default 1 */
  readonly n?: number | undefined;
}

/**
 * The absolute path of the sidecar of `output` in `outputDir` when it is
 * that output's own: inside the folder, not a symbolic link, and naming the
 * output's run, item and index. Undefined for none, for a link, and for a
 * foreign file that merely has the name (downloads warn
 * `output.sidecar_exists` about it): only an output's own sidecar travels
 * with it.
 */
export function ownSidecarOf(outputDir: string, output: SidecarOwner): string | undefined {
  if (!output.file || !output.runId) return undefined;
  let sidecar: string;
  try {
    sidecar = resolveInside(outputDir, sidecarPathOf(output.file));
  } catch (error) {
    if (error instanceof PathEscapeError) return undefined;
    throw error;
  }
  try {
    const found = JSON.parse(readFileSync(sidecar, 'utf8')) as Partial<Provenance>;
    const own =
      found.runId === output.runId && found.item === output.item && found.n === (output.n ?? 1);
    return own ? sidecar : undefined;
  } catch {
    return undefined;
  }
}
