/**
 * A manifest's rows written once per key, where the key first appears, with
 * its last row: what a Map of rows by key gives, in two passes over rows that
 * are not held (a spool, the file itself). Only the keys seen twice keep
 * their rows; every other key is remembered as a number (`hash52`), which
 * can only make a key look repeated, never hide a repeat.
 */
import { hash52 } from '../shared/index.js';
import { type ManifestRow, manifestRowKey } from './manifest-row.js';

export class RowsOnce {
  readonly #seen = new Set<number>();
  readonly #repeated = new Map<string, ManifestRow>();

  /** The first pass: every row, in order. */
  see(row: ManifestRow): void {
    const key = manifestRowKey(row);
    const id = hash52(key);
    if (this.#seen.has(id)) this.#repeated.set(key, row);
    else this.#seen.add(id);
  }

  /** The second pass over the same rows: each key once, in its first place, with its last row. */
  *once(rows: Iterable<ManifestRow>): Generator<ManifestRow> {
    this.#seen.clear();
    // The common rewrite repeats no key: its rows pass as they are.
    if (this.#repeated.size === 0) {
      yield* rows;
      return;
    }
    const written = new Set<string>();
    for (const row of rows) {
      const key = manifestRowKey(row);
      const last = this.#repeated.get(key);
      if (last === undefined) yield row;
      else if (!written.has(key)) {
        written.add(key);
        yield last;
      }
    }
  }
}
