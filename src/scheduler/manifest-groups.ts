/**
 * What a manifest row group says of an item, checked against the disk: the
 * rows adoption reads of each item (adopt-manifest.ts), and whether they
 * name outputs that are still what the run wrote.
 */
import type { JobItem } from '../job/index.js';
import {
  isAlreadyDownloaded,
  isSingleLinkedFile,
  type ManifestRow,
  resolveInside,
} from '../outputs/index.js';

/** One item's verified outputs, by output number. */
export type Verified = Map<number, ManifestRow & { file: string; sha256: string }>;

/**
 * Each item's rows from the run that recorded it last (file order): what the
 * journal's latest record of it would have been. Older runs' rows of the same
 * item are left out, so a later failure is not hidden by an earlier success.
 */
export function latestGroups(rows: readonly ManifestRow[]): Map<string, ManifestRow[]> {
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
 * the output folder that still has the recorded sha256 and no other name (a
 * hard link); otherwise undefined.
 */
export async function verifiedOutputs(
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
    // A file with another name elsewhere (a hard link) is not one the run
    // wrote: its bytes are another file's, whatever the row says of them.
    if (!isSingleLinkedFile(absolute)) return undefined;
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
