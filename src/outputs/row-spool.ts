/**
 * The job's rows of a manifest rebuild, kept on disk between the pass that
 * builds them from the journal and the pass that writes them marked: the
 * marks (`CurrentRule`) and the CSV columns need every row first, and
 * building the rows is most of a rebuild's work, so they are built once and
 * read back, never all held in memory. The spool is a temp file beside the
 * manifest (the same disk the manifest is written to), removed by `dispose`.
 */
import { closeSync, openSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import { tempBeside } from '../shared/index.js';
import { FLUSH_BYTES } from './fs-durable.js';
import { manifestLines } from './manifest-read.js';
import type { ManifestRow } from './manifest-row.js';

/** The name a folder's spools are temp files of (never a file itself). */
export function spoolOf(dir: string): string {
  return path.join(dir, 'manifest.rows');
}

export class RowSpool {
  readonly #file: string;
  #fd: number | undefined;
  #pending: string[] = [];
  #pendingBytes = 0;

  constructor(dir: string) {
    this.#file = tempBeside(spoolOf(dir));
    this.#fd = openSync(this.#file, 'wx');
  }

  add(row: ManifestRow): void {
    const line = `${JSON.stringify(row)}\n`;
    this.#pending.push(line);
    this.#pendingBytes += line.length;
    if (this.#pendingBytes >= FLUSH_BYTES) this.#flush();
  }

  /** The rows added, in their order (everything added is written first). */
  *rows(): Generator<ManifestRow> {
    this.#flush();
    for (const line of manifestLines(this.#file)) {
      if (line !== '') yield JSON.parse(line) as ManifestRow;
    }
  }

  /** Closes and removes the spool. */
  dispose(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    this.#pending = [];
    try {
      unlinkSync(this.#file);
    } catch {
      // never created
    }
  }

  #flush(): void {
    if (this.#pending.length === 0 || this.#fd === undefined) return;
    writeSync(this.#fd, Buffer.from(this.#pending.join(''), 'utf8'));
    this.#pending = [];
    this.#pendingBytes = 0;
  }
}
