/**
 * A lost journal (issue 12.6, issue 13.2): the journal is missing, or empty
 * after its WAL was deleted, or holds no run of this job on this service base
 * URL, but the output folder and its `manifest.jsonl` remain (a CI runner
 * whose cache expired). The items the manifest lists as succeeded, with every
 * file still there and unchanged, are recorded as one finished run
 * (`adopted-…`), so the desired-state comparison sees them done and nothing
 * already paid for is paid again. Everything else is made by the run as usual.
 *
 * The manifest does not record everything an item's identity covers (only
 * step, model and prompt are compared, and the template values of an item
 * named by a row key, whose key alone does not tell them): an item is adopted as the job file
 * describes it now. An item adopted wrongly is fixed with `--fresh`; an item
 * not adopted costs one more create. Only files that are intact count.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { JobItem, LoadedJob } from '../job/index.js';
import { type AdoptedItem, idempotencyKey, type Journal, newRunId } from '../journal/index.js';
import {
  isAlreadyDownloaded,
  MANIFEST_JSONL,
  type ManifestRow,
  ManifestRowSchema,
  resolveInside,
} from '../outputs/index.js';
import type { Logger } from '../shared/index.js';
import { toNewItem } from './item-records.js';
import { scopedLatest } from './next-run.js';
import { assertRunId } from './run-id.js';

export interface AdoptOptions {
  readonly outputDir: string;
  /** The run snapshot converge records (service, scope, outputDir, limits, contracts). */
  readonly snapshot: { readonly service: string; readonly scope: string } & Record<string, unknown>;
  /** An item's identity hash (src/scheduler/item-identity.ts). */
  readonly identity: (item: JobItem) => string;
  readonly logger: Logger;
}

/** One item's verified outputs, by output number. */
type Verified = Map<number, ManifestRow & { file: string; sha256: string }>;

/**
 * When the journal has no record of the job on this service,
 * adopts what `<outputDir>/manifest.jsonl` shows made (see the module
 * comment). Returns how many items were adopted (0 when the journal knows the
 * job, or nothing in the manifest is intact).
 */
export async function adoptLostJournal(
  journal: Journal,
  job: LoadedJob,
  items: readonly JobItem[],
  options: AdoptOptions,
): Promise<number> {
  if (scopedLatest(journal, job.name, options.snapshot).size > 0) return 0;
  const groups = latestGroups(readRows(options.outputDir, options.logger));
  if (groups.size === 0) return 0;
  const verified = new Map<string, Verified>();
  for (const item of items) {
    const rows = groups.get(item.key);
    const outputs = rows && (await verify(item, rows, options.outputDir));
    if (outputs) verified.set(item.key, outputs);
  }
  const runId = `adopted-${newRunId()}`;
  assertRunId(runId);
  const byKey = new Map(items.map((item) => [item.key, item]));
  const adopted: AdoptedItem[] = [];
  const adoptable = (item: JobItem, seen: Set<string>): boolean => {
    if (!verified.has(item.key) || seen.has(item.key)) return false;
    if (!item.source) return true;
    const source = byKey.get(item.source.itemKey);
    return source !== undefined && adoptable(source, new Set([...seen, item.key]));
  };
  for (const item of items) {
    if (!adoptable(item, new Set())) continue;
    const outputs = verified.get(item.key)!;
    // A `from:` item was made from its source's output: the desired-state
    // check reads that generation id from the winning attempt's request.
    const sourceId = item.source
      ? verified.get(item.source.itemKey)?.get(item.source.outputIndex + 1)?.generationId
      : undefined;
    adopted.push({
      item: toNewItem(item, options.identity(item)),
      attempt: {
        idempotencyKey: idempotencyKey({
          jobName: job.name,
          runId,
          stepId: item.stepId,
          itemKey: item.key,
          attempt: 1,
        }),
        request: sourceId ? { ...item.request, generationId: sourceId } : item.request,
      },
      outputs: [...outputs.values()].map((row) => ({
        output: {
          n: row.n ?? 1,
          generationId: row.generationId,
          url: row.url,
          kind: row.kind,
          modelId: row.modelId,
        },
        file: {
          file: row.file,
          sha256: row.sha256,
          bytes: row.bytes ?? 0,
          contentType: row.contentType ?? null,
        },
      })),
    });
  }
  const listed = [...groups.keys()].filter((key) => byKey.has(key)).length;
  if (listed > adopted.length) {
    options.logger.info(
      { listed, adopted: adopted.length },
      `${listed - adopted.length} item(s) in ${MANIFEST_JSONL} were not adopted (failed, or a file is missing or changed): they are made again`,
    );
  }
  if (adopted.length === 0) return 0;
  const message = `adopted ${adopted.length} item(s) from ${MANIFEST_JSONL} (journal had no record of them)`;
  journal.adoptRun({
    run: {
      runId,
      jobName: job.name,
      jobPath: job.file,
      jobHash: job.textHash,
      budget: job.budget ?? null,
      options: { ...options.snapshot, adoptedFrom: MANIFEST_JSONL },
      tags: job.tags,
    },
    items: adopted,
    event: { type: 'run.adopted', message, data: { items: adopted.length } },
  });
  options.logger.info({ runId, adopted: adopted.length }, message);
  return adopted.length;
}

/** The manifest's valid rows in file order; a line that is not one is skipped with a warning. */
function readRows(outputDir: string, logger: Logger): ManifestRow[] {
  let text: string;
  try {
    text = readFileSync(path.join(outputDir, MANIFEST_JSONL), 'utf8');
  } catch {
    return [];
  }
  const rows: ManifestRow[] = [];
  text.split('\n').forEach((line, index) => {
    if (line.trim() === '') return;
    try {
      rows.push(ManifestRowSchema.parse(JSON.parse(line)));
    } catch {
      logger.warn(
        { line: index + 1 },
        `${MANIFEST_JSONL} line ${index + 1} is not a manifest row: skipped`,
      );
    }
  });
  return rows;
}

/**
 * Each item's rows from the run that recorded it last (file order): what the
 * journal's latest record of it would have been. Older runs' rows of the same
 * item are left out, so a later failure is not hidden by an earlier success.
 */
function latestGroups(rows: readonly ManifestRow[]): Map<string, ManifestRow[]> {
  const latestRun = new Map<string, string>();
  for (const row of rows) latestRun.set(row.item, row.runId ?? '');
  const groups = new Map<string, ManifestRow[]>();
  for (const row of rows) {
    if ((row.runId ?? '') !== latestRun.get(row.item)) continue;
    groups.set(row.item, [...(groups.get(row.item) ?? []), row]);
  }
  return groups;
}

/**
 * The item's outputs when every row of its group succeeded for this step,
 * model and prompt, is exactly outputs 1..expectedOutputs, and names a file inside
 * the output folder that still has the recorded sha256; otherwise undefined.
 */
async function verify(
  item: JobItem,
  rows: readonly ManifestRow[],
  outputDir: string,
): Promise<Verified | undefined> {
  const prompt = item.request.input.prompt;
  const outputs: Verified = new Map();
  for (const row of rows) {
    const { file, sha256 } = row;
    if (row.status !== 'succeeded' || !file || !sha256) return undefined;
    if (row.step !== item.stepId || row.modelId !== item.modelId) return undefined;
    if (row.prompt !== undefined && row.prompt !== prompt) return undefined;
    // A row named by `key:` is the same item whatever its other values: they must match too.
    if (item.keyed && row.vars !== undefined && !sameValues(row.vars, item.vars)) return undefined;
    let absolute: string;
    try {
      absolute = resolveInside(outputDir, file);
    } catch {
      return undefined;
    }
    if (!(await isAlreadyDownloaded(absolute, sha256))) return undefined;
    outputs.set(row.n ?? 1, { ...row, file, sha256 });
  }
  if (outputs.size !== item.expectedOutputs) return undefined;
  for (let n = 1; n <= item.expectedOutputs; n += 1) if (!outputs.has(n)) return undefined;
  return new Map([...outputs].sort(([a], [b]) => a - b));
}

function sameValues(recorded: NonNullable<ManifestRow['vars']>, vars: JobItem['vars']): boolean {
  const names = Object.keys(vars);
  return (
    names.length === Object.keys(recorded).length &&
    names.every((name) => recorded[name] === vars[name])
  );
}
