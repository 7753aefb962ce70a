/**
 * Which file names of the output folder are taken, and by which output, so
 * that no output ever lands on another's file: the downloaded outputs of
 * every run in the journal that writes into this folder (earlier runs of the
 * job, other jobs sharing it), and files on disk no record owns (a user's
 * file, a file of a lost journal). A name taken by another gets a suffix
 * derived from the output's run, item and number, so a resume after a kill
 * computes the same name; except that a name held by an older output of the
 * same item goes to the newer one, and the older file is moved to its own
 * suffixed name (`claimReadable`, move-aside.ts).
 */
import path from 'node:path';
import type { Journal } from '../journal/index.js';
import { type DescribedItems, runsInFolder } from '../outputs/index.js';
import { hash52, sha256Hex } from '../shared/index.js';
import type { OutputKey } from './move-aside.js';

/** The holder of a name found on disk that no journal record owns. */
const ON_DISK = -1;

/**
 * An owner as a number (`hash52`). The claims hold one entry per output
 * written into the folder, for the whole run: a number per entry, not the
 * owner's string (run id, item key, number), keeps what a long run holds
 * small. Two owners would share a number only by a 52-bit hash collision
 * between two outputs planning the same name.
 */
const ownerId = hash52;

/** The identity of one output across runs. */
export function outputOwner(output: OutputKey): string {
  return `${output.runId}\u0000${output.itemKey}\u0000${output.n}`;
}

/** The output an `outputOwner` names; undefined for a file on disk no record owns. */
function ownerKey(owner: string): OutputKey | undefined {
  const [runId, itemKey, n] = owner.split('\u0000');
  if (!runId || itemKey === undefined || n === undefined) return undefined;
  return { runId, itemKey, n: Number(n) };
}

export class OutputNames {
  #claims: Map<string, number> | undefined;
  /**
   * The owners, in full, of names held by outputs of other runs: the only
   * holders `claimReadable` may move aside (one of this run never is).
   */
  readonly #otherRuns = new Map<number, string>();
  #ownJobRuns: ReadonlySet<string> | undefined;

  constructor(
    private readonly journal: Journal,
    private readonly outputDir: string,
    /** The current run: its outputs count even if it recorded another folder. */
    private readonly runId: string,
  ) {}

  /**
   * The name `owner` gets for its planned `relative` name: the name itself
   * when free or already its own, else the first free suffixed variant.
   */
  claim(relative: string, owner: string): string {
    const claims = this.#load();
    const id = ownerId(owner);
    let candidate = relative;
    for (let tries = 1; ; tries++) {
      const holder = claims.get(candidate);
      if (holder === undefined || holder === id) break;
      candidate = suffixed(relative, owner, tries);
    }
    claims.set(candidate, id);
    return candidate;
  }

  /**
   * `claim` for a newly downloaded output, except that a name held by an
   * output of the same job that is no longer current is taken from it: an
   * older output of the same item (which this one supersedes), or one of an
   * item the job file no longer describes (retired: not in `described`).
   * `moveAside` moves that file to the holder's first free suffixed name
   * (false: that name holds another file, the next is tried), and the new
   * output gets the readable name. A user's file, another job's output or
   * another current item's is never taken.
   */
  claimReadable(
    relative: string,
    output: OutputKey,
    moveAside: (held: OutputKey, aside: string) => boolean,
    described?: DescribedItems,
  ): string {
    const claims = this.#load();
    const owner = outputOwner(output);
    const holderId = claims.get(relative);
    const holder = holderId === undefined ? undefined : this.#otherRuns.get(holderId);
    const held = holder === undefined ? undefined : ownerKey(holder);
    const notCurrent =
      held !== undefined &&
      held.runId !== output.runId &&
      this.#jobRuns().has(held.runId) &&
      (held.itemKey === output.itemKey ||
        (described !== undefined && !described.has(held.itemKey)));
    if (holderId === undefined || !holder || !held || !notCurrent) {
      return this.claim(relative, owner);
    }
    for (let tries = 1; ; tries++) {
      const aside = suffixed(relative, holder, tries);
      const taken = claims.get(aside);
      if (taken !== undefined && taken !== holderId) continue;
      if (!moveAside(held, aside)) {
        claims.set(aside, ON_DISK);
        continue;
      }
      claims.set(aside, holderId);
      claims.set(relative, ownerId(owner));
      return relative;
    }
  }

  /** `relative` holds a file no record owns: never to be written over. */
  takenOnDisk(relative: string): void {
    this.#load().set(relative, ON_DISK);
  }

  /** The runs of this run's job (its outputs are the ones a newer output may move aside). */
  #jobRuns(): ReadonlySet<string> {
    if (this.#ownJobRuns) return this.#ownJobRuns;
    const jobName = this.journal.getRun(this.runId)?.jobName;
    const runs = runsInFolder(this.journal, this.outputDir, jobName).filter(
      (run) => run.jobName === jobName,
    );
    this.#ownJobRuns = new Set([this.runId, ...runs.map((run) => run.runId)]);
    return this.#ownJobRuns;
  }

  #load(): Map<string, number> {
    if (this.#claims) return this.#claims;
    const claims = new Map<string, number>();
    const runIds = new Set(runsInFolder(this.journal, this.outputDir).map((r) => r.runId));
    runIds.add(this.runId);
    for (const runId of runIds) {
      this.journal.eachDownloadedFile(runId, ({ itemKey, n, file }) => {
        const owner = outputOwner({ runId, itemKey, n });
        const id = ownerId(owner);
        claims.set(file, id);
        if (runId !== this.runId) this.#otherRuns.set(id, owner);
      });
    }
    this.#claims = claims;
    return claims;
  }
}

/** The name an output is moved aside to from `relative` (its first suffixed name). */
export const asideNameOf = (relative: string, output: OutputKey): string =>
  suffixed(relative, outputOwner(output), 1);

/** `a/b.png` -> `a/b-<8 hex>.png`, the hex from the owner (and the try, after the first). */
function suffixed(relative: string, owner: string, tries: number): string {
  const ext = path.posix.extname(relative);
  const suffix = sha256Hex(tries === 1 ? owner : `${owner}\u0000${tries}`).slice(0, 8);
  return `${relative.slice(0, relative.length - ext.length)}-${suffix}${ext}`;
}
