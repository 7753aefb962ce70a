/**
 * The output folder's lock of a job, and its record of which journal owns the
 * job's rows there (docs/outputs.md, "Who works a job in a folder").
 *
 * The journal's lock is per journal file: two journals (`--journal jA.db`,
 * `--journal jB.db`) running one job into one folder each hold their own, so
 * each would pay for every item, up to the whole budget, and move the other's
 * files aside. So a run also takes the job's lock in the folder it writes to:
 * the journal's own lock (journal/lock.ts), so it dies with its holder, a
 * SIGKILLed holder's lock is taken over, and `--wait` waits for it as for
 * the journal's. It is per job: other jobs sharing the folder run meanwhile.
 *
 * Once it holds the lock, the run records its journal as the owner of the
 * job's rows. A run whose journal is not the recorded owner says whose rows it
 * finds and takes them over: what the manifest shows made with intact files
 * is adopted rather than paid again (adopt-manifest.ts), and the folder's
 * rows of the job are this journal's from then on. Unless the owner still
 * has an unfinished run of the job (killed, interrupted, stopped at its
 * budget): what that run paid for and has not downloaded is known to its
 * journal only, so the run is refused and pointed to that journal.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import {
  acquireLock,
  describeHolder,
  type HeldLock,
  holderLogFields,
  isJournalUrl,
  type Journal,
  journalDisplayName,
  type LockHolder,
  lockFileName,
  openJournal,
  type RunRecord,
} from '../journal/index.js';
import { diskFullCode, OutputDiskFullError, writeFileAtomicSync } from '../outputs/index.js';
import { canonicalPath, EXIT, IbatchError, type Logger, thisMachine } from '../shared/index.js';

/** The folder inside an output folder that holds the jobs' locks and owner records. */
export const OWNERS_FOLDER = '.ibatch-owners';

/** The journal that last worked a job in a folder: the owner of its rows there. */
export interface FolderOwner {
  readonly job: string;
  /** The journal's canonical path (symlinks resolved). */
  readonly journal: string;
  readonly hostname: string;
  /** When this journal became the owner (ISO 8601 UTC). */
  readonly since: string;
}

/**
 * Another journal is working the job in this output folder. Exit 2: nothing
 * was spent, and the user either waits (`--wait`) or uses that journal.
 */
export class OutputFolderLockedError extends IbatchError {
  readonly holder: LockHolder | undefined;
  readonly lockPath: string;

  constructor(folder: string, job: string, lockPath: string, holder: LockHolder | undefined) {
    super(
      'output_folder_locked',
      `The job "${job}" is being run into ${folder} by ${describeHolder(holder)}: ` +
        'only one journal at a time works a job in one output folder. Wait for it to finish, ' +
        `or pass --wait to wait for it (lock file: ${lockPath}).`,
      EXIT.invalid,
    );
    this.holder = holder;
    this.lockPath = lockPath;
  }
}

/**
 * The journal that owns the job's rows in this folder has an unfinished run
 * of it: only that journal knows what the run has paid for and not yet
 * downloaded, so another journal would pay for it again. Exit 2, nothing spent.
 */
export class OutputFolderOwnedError extends IbatchError {
  constructor(folder: string, job: string, owner: FolderOwner, run: RunRecord) {
    super(
      'output_folder_owned',
      `The job "${job}" has an unfinished run ${run.runId} (${run.status}) in the journal ` +
        `${owner.journal}, which owns its rows in ${folder}: only that journal knows what the run ` +
        `has paid for and not downloaded yet. Resume it with --journal ${owner.journal}; or move ` +
        'that journal away to go on with this one (what the run paid for and did not download is then paid again).',
      EXIT.invalid,
    );
  }
}

export interface FolderLockOptions {
  readonly job: string;
  /** The journal this run writes. */
  readonly journalPath: string;
  /** As the journal's lock: false fails at once, true waits (bounded), a number waits that many ms. */
  readonly wait: boolean | number;
  readonly signal?: AbortSignal;
  readonly logger: Pick<Logger, 'info'>;
}

function ownerPath(folder: string, job: string): string {
  return path.join(folder, OWNERS_FOLDER, lockFileName(job).replace(/\.lock$/, '.owner.json'));
}

/** The recorded owner of `job`'s rows in `folder`, if any (an unreadable record counts as none). */
export function folderOwner(folder: string, job: string): FolderOwner | undefined {
  const file = ownerPath(folder, job);
  if (!existsSync(file)) return undefined;
  try {
    const parsed = JSON.parse(readFileSync(file, 'utf8')) as Partial<FolderOwner>;
    const { journal, hostname: host, since } = parsed;
    if (typeof journal !== 'string' || typeof host !== 'string') return undefined;
    return { job, journal, hostname: host, since: typeof since === 'string' ? since : '' };
  } catch {
    return undefined;
  }
}

/**
 * The output folders a run holds for its job, each locked once: the job's
 * folder before anything is adopted or spent, and a resumed run's own folder
 * when it differs (run-folder.ts). `release` lets go of all of them.
 */
export class OutputFolderLocks {
  readonly #options: FolderLockOptions;
  readonly #journal: string;
  readonly #held = new Map<string, HeldLock>();

  constructor(options: FolderLockOptions) {
    this.#options = options;
    // A PostgreSQL journal is recorded by its URL without the password.
    this.#journal = isJournalUrl(options.journalPath)
      ? journalDisplayName(options.journalPath)
      : canonicalPath(options.journalPath);
  }

  /** Takes the job's lock in `folder` (unless held) and records this journal as its owner. */
  async hold(folder: string): Promise<void> {
    try {
      await this.#hold(folder);
    } catch (error) {
      // The lock is the run's first write into the folder: a full disk here
      // is a full disk (exit 4, nothing spent yet), not an unexpected error.
      const full = diskFullCode(error);
      throw full ? new OutputDiskFullError(folder, full, { cause: error }) : error;
    }
  }

  async #hold(folder: string): Promise<void> {
    const key = canonicalPath(folder);
    if (this.#held.has(key)) return;
    const { job, logger } = this.#options;
    // acquireLock makes the owners folder as it makes a journal's lock folder.
    const lock = await acquireLock(path.join(folder, OWNERS_FOLDER, lockFileName(job)), {
      wait: this.#options.wait,
      job,
      journal: this.#journal,
      ...(this.#options.signal ? { signal: this.#options.signal } : {}),
      refuse: (at, holder) => new OutputFolderLockedError(folder, job, at, holder),
      onWait: (holder) =>
        logger.info(
          holderLogFields(holder),
          `waiting for ${describeHolder(holder)} to finish the job "${job}" in ${folder}`,
        ),
      onStaleTakeover: (holder) =>
        logger.info(
          holderLogFields(holder),
          `took over the lock of job "${job}" in ${folder} from ${describeHolder(holder)}, which is gone`,
        ),
    });
    this.#held.set(key, lock);
    try {
      await this.#takeOwnership(folder);
    } catch (error) {
      this.#held.delete(key);
      lock.release();
      throw error;
    }
  }

  /** Lets go of every folder held. */
  release(): void {
    for (const lock of this.#held.values()) lock.release();
    this.#held.clear();
  }

  async #takeOwnership(folder: string): Promise<void> {
    const { job, logger } = this.#options;
    const previous = folderOwner(folder, job);
    const host = thisMachine();
    if (previous?.journal === this.#journal && previous.hostname === host) return;
    if (previous) {
      const unfinished = previous.hostname === host && (await unfinishedRun(previous.journal, job));
      if (unfinished) throw new OutputFolderOwnedError(folder, job, previous, unfinished);
      logger.info(
        {
          previousJournal: previous.journal,
          previousHost: previous.hostname,
          since: previous.since,
        },
        `the rows of job "${job}" in ${folder} were written with the journal ${previous.journal} on ${previous.hostname}: from now on ${this.#journal} works them`,
      );
    }
    const owner: FolderOwner = {
      job,
      journal: this.#journal,
      hostname: host,
      since: new Date().toISOString(),
    };
    writeFileAtomicSync(ownerPath(folder, job), `${JSON.stringify(owner, null, 2)}\n`);
  }
}

/**
 * The job's unfinished run in the journal at `file` (this host), if it can be
 * read. A journal that is gone or cannot be read keeps nothing from anyone:
 * what the manifest shows made is adopted (a lost journal).
 */
async function unfinishedRun(file: string, job: string): Promise<RunRecord | undefined> {
  if (!existsSync(file)) return undefined;
  let journal: Journal | undefined;
  try {
    journal = await openJournal(file, { readonly: true });
    return journal.findUnfinishedRun(job);
  } catch {
    return undefined;
  } finally {
    journal?.close();
  }
}
