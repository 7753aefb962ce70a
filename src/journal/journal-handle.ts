/**
 * What every journal handle is besides its operations: the store it runs
 * them on, the one guard that turns the disk failing into a
 * JournalWriteError (and tells the run at the first one), snapshots and
 * transactions, and closing with the writer's lock.
 */

import type { JournalWriteError } from './errors.js';
import { journalFault } from './faults.js';
import type { JournalStore } from './sql.js';

/** What a writer holds while it runs its job: released when the journal closes. */
export interface JournalLock {
  release(): void;
}

export class JournalHandle {
  /** Absolute path of the database file, or the PostgreSQL URL without its password. */
  readonly path: string;
  readonly readonly: boolean;
  protected readonly store: JournalStore;
  readonly #lock: JournalLock | undefined;
  #closed = false;
  #fault: JournalWriteError | undefined;
  readonly #faultListeners = new Set<(fault: JournalWriteError) => void>();

  /** Use `openJournal`. */
  constructor(store: JournalStore, path: string, lock: JournalLock | undefined) {
    this.store = store;
    this.path = path;
    this.#lock = lock;
    this.readonly = lock === undefined;
  }

  /**
   * Runs `fn` as one read of the journal: every read inside sees the same
   * state (a WAL snapshot), whatever another process commits meanwhile. For
   * reads made in several passes (the manifest's rebuild) that must agree.
   */
  snapshot<T>(fn: () => T): T {
    // Only the snapshot's begin and end are this journal's to judge: what `fn`
    // throws (a full output disk while the manifest is written) stays its own
    // error, and the journal's reads inside it are guarded on their own.
    const outcome = this.guard(() =>
      this.store.snapshot((): { value: T } | { error: unknown } => {
        try {
          return { value: fn() };
        } catch (error) {
          return { error };
        }
      }),
    );
    if ('error' in outcome) throw outcome.error;
    return outcome.value;
  }

  /** Runs `fn` in one immediate transaction (several ops that must commit together). */
  transaction<T>(fn: () => T): T {
    return this.guard(() => this.store.transaction(fn));
  }

  /**
   * A number that changes whenever another connection (another process: a
   * `run`, `reject`) has committed to the journal since this one last looked
   * (`PRAGMA data_version`); this connection's own commits leave it alone.
   * Lets a long-lived reader keep what it built until the journal changes.
   */
  changeCount(): number {
    return this.guard(() => this.store.changeCount());
  }

  /** `PRAGMA integrity_check` result: `['ok']` when healthy. */
  integrityCheck(): string[] {
    return this.guard(() => this.store.integrityCheck());
  }

  /**
   * The first time the journal's disk failed (full, read-only, I/O error):
   * the run must stop, since nothing more can be recorded before it is sent.
   * Stays set: later failures are its consequences.
   */
  get fault(): JournalWriteError | undefined {
    return this.#fault;
  }

  /** Calls `listener` at the first fault (see `fault`); returns a disposer. */
  onFault(listener: (fault: JournalWriteError) => void): () => void {
    this.#faultListeners.add(listener);
    return () => this.#faultListeners.delete(listener);
  }

  /** Runs one operation; a failure of the disk becomes a JournalWriteError naming the journal. */
  protected guard<T>(operation: () => T): T {
    try {
      return operation();
    } catch (error) {
      // A reader (`status`, `report`) writes nothing: its errors stay as they are.
      const fault = this.readonly ? undefined : journalFault(error, this.path, 'run');
      if (!fault) throw error;
      if (!this.#fault) {
        this.#fault = fault;
        for (const listener of this.#faultListeners) {
          try {
            listener(fault);
          } catch {
            // A listener failing (it may write to this journal) must not hide the fault.
          }
        }
      }
      throw fault;
    }
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** Closes the database and releases the lock. Safe to call twice. */
  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    try {
      this.store.close();
    } finally {
      this.#lock?.release();
    }
  }
}
