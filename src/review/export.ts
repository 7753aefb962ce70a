/**
 * `ibatch export`: the current outputs (or only the approved ones) copied
 * into a folder for hand-off, with their manifest rows. Names stay the
 * readable ones of the output folder; a name DIR already holds gets `-2`,
 * `-3`... Each output's own provenance sidecar (`<file>.json`) is copied
 * with it. Nothing in DIR is ever overwritten, and nothing is read from
 * outside the output folder (every source goes through `resolveInside`).
 */
import { constants, copyFileSync, existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import {
  MANIFEST_CSV,
  MANIFEST_JSONL,
  type ManifestRow,
  renderManifest,
  resolveInside,
} from '../outputs/index.js';
import { ownSidecarOf, sidecarPathOf } from '../provenance/index.js';
import { makeFolderSync, UsageError } from '../shared/index.js';
import { chosenRows } from './chosen.js';

export interface ExportOptions {
  /** Only outputs whose latest decision is `approved`. */
  readonly approved?: boolean;
}

/** Copies the chosen rows' files into `dir` and writes their manifest there; returns the rows as exported. */
export function exportOutputs(
  rows: readonly ManifestRow[],
  outputDir: string,
  dir: string,
  options: ExportOptions = {},
): ManifestRow[] {
  const target = path.resolve(dir);
  for (const name of [MANIFEST_JSONL, MANIFEST_CSV]) {
    if (existsSync(path.join(target, name)))
      throw new UsageError(`${path.join(target, name)} exists: export never overwrites a file`);
  }
  const chosen = chosenRows(rows, options.approved === true);
  makeFolderSync(target);
  const taken = new Set<string>();
  const exported = chosen.map((row) => {
    const source = resolveInside(outputDir, row.file ?? '');
    const name = freeName(target, row.file ?? '', taken);
    const dest = resolveInside(target, name);
    makeFolderSync(path.dirname(dest));
    copyFileSync(source, dest, constants.COPYFILE_EXCL);
    // Its own provenance sidecar travels with the file (under the file's new name).
    const sidecar = ownSidecarOf(outputDir, row);
    if (sidecar) copyFileSync(sidecar, sidecarPathOf(dest), constants.COPYFILE_EXCL);
    return { ...row, file: name };
  });
  // Checked and redacted like every manifest: rows rebuilt from the journal can quote the service.
  const manifest = renderManifest(exported);
  writeFileSync(path.join(target, MANIFEST_JSONL), manifest.jsonl, { flag: 'wx' });
  writeFileSync(path.join(target, MANIFEST_CSV), manifest.csv, { flag: 'wx' });
  return exported;
}

/** `name`, or `name-2.ext`, `name-3.ext`... when DIR (or this export) already holds it. */
function freeName(dir: string, name: string, taken: Set<string>): string {
  const ext = path.posix.extname(name);
  const stem = name.slice(0, name.length - ext.length);
  for (let k = 1; ; k += 1) {
    const candidate = k === 1 ? name : `${stem}-${k}${ext}`;
    const free = (file: string) => !existsSync(path.join(dir, file));
    if (!taken.has(candidate) && free(candidate) && free(sidecarPathOf(candidate))) {
      taken.add(candidate);
      return candidate;
    }
  }
}
