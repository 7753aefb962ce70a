/**
 * The job's rows of a manifest rebuild, kept on disk between the pass that
 * builds them from the journal and the pass that writes them marked: the
 * marks (`CurrentRule`) and the CSV columns need every row first, and
 * building the rows is most of a rebuild's work, so they are built once and
 * read back, never all held in memory. The spool is a temp file beside the
 * manifest (the same disk the manifest is written to), removed by `dispose`.
 */
import path from 'node:path';
import { fileLines } from './file-lines.js';
import { TempFileSync } from './fs-durable.js';
import type { ManifestRow } from './manifest-row.js';

/** The name a folder's spools are temp files of (never a file itself). */
export function spoolOf(dir: string): string {
  return path.join(dir, 'manifest.rows');
}

export class RowSpool {
  readonly #file: TempFileSync;

  constructor(dir: string) {
    this.#file = new TempFileSync(spoolOf(dir));
  }

  add(row: ManifestRow): void {
    this.#file.write(`${JSON.stringify(row)}\n`);
  }

  /** The rows added, in their order (everything added is written first). */
  *rows(): Generator<ManifestRow> {
    this.#file.flush();
    for (const line of fileLines(this.#file.temp)) {
      if (line !== '') yield JSON.parse(line) as ManifestRow;
    }
  }

  /** Closes and removes the spool. */
  dispose(): void {
    this.#file.abort();
  }
}
