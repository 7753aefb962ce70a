/**
 * The temporary file a download streams into, beside its destination, and
 * the move into place that never replaces another file (see download.ts).
 */
import { randomBytes } from 'node:crypto';
import { type FileHandle, lstat, open, readFile, rename, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { MediaType } from '../contract/index.js';
import { makeFolderSync, sha256Hex } from '../shared/index.js';
import { hashFile } from '../uploads/index.js';
import { DOWNLOAD_FAILURES, DownloadError } from './errors.js';
import { fsyncDir, placeWithoutReplacing } from './fs-durable.js';
import { assertNotProtected } from './protected-paths.js';

/** Alternatives tried before a taken destination fails the download. */
const MAX_ALTERNATIVES = 8;

/** What to do when the destination holds a file (DownloadOptions `existing`, `alternative`). */
export interface CommitOptions {
  readonly existing?: 'keep' | 'replace';
  readonly alternative?: (taken: string, tries: number) => string;
}

/**
 * The tag of a job's temp files (`.<name>.part-<tag>-<random>`). Jobs may
 * share an output folder, and only one process works a job in a folder at a
 * time (the folder's per-job lock), so a run may remove the temp files of
 * its own job left by a killed process, and must leave every other job's
 * alone: they may be that job's downloads in progress.
 */
export function partFileTag(job: string): string {
  return sha256Hex(`part:${job}`).slice(0, 8);
}

/** Whether `name` is a temp file of the job tagged `tag` (`partFileTag`). */
export function isPartFileOf(name: string, tag: string): boolean {
  return name.startsWith('.') && new RegExp(`\\.part-${tag}-[0-9a-f]{12}$`).test(name);
}

/** `.<name>.part-[<tag>-]<random>` beside the destination; renamed into place on commit, removed otherwise. */
export class PartFile {
  private handle: FileHandle | undefined;
  private committed = false;

  private constructor(
    readonly dest: string,
    readonly type: MediaType,
    private readonly tempPath: string,
    private readonly protectedPaths: readonly string[],
    handle: FileHandle,
  ) {
    this.handle = handle;
  }

  static async create(
    dest: string,
    type: MediaType,
    protectedPaths: readonly string[],
    /** `partFileTag` of the job downloading. @default none: no job's, never removed as stale */
    tag?: string,
  ): Promise<PartFile> {
    if (!path.isAbsolute(dest)) throw new TypeError(`Expected an absolute \`dest\`, got ${dest}`);
    assertNotProtected(dest, protectedPaths);
    const dir = path.dirname(dest);
    makeFolderSync(dir);
    const tempPath = path.join(
      dir,
      `.${path.basename(dest)}.part-${tag ? `${tag}-` : ''}${randomBytes(6).toString('hex')}`,
    );
    return new PartFile(dest, type, tempPath, protectedPaths, await open(tempPath, 'wx'));
  }

  async write(chunk: Uint8Array): Promise<void> {
    if (chunk.length > 0) await this.handle?.write(chunk);
  }

  /**
   * Replaces the written bytes with `change(bytes)` when it returns any;
   * returns the new size and sha256, or undefined when nothing changed.
   */
  async rewrite(
    change: (bytes: Buffer) => Buffer | undefined,
  ): Promise<{ bytes: number; sha256: string } | undefined> {
    const handle = this.handle;
    if (!handle) throw new Error('part file already closed');
    const changed = change(await readFile(this.tempPath));
    if (!changed) return undefined;
    await handle.truncate(0);
    await handle.write(changed, 0, changed.length, 0);
    return { bytes: changed.length, sha256: sha256Hex(changed) };
  }

  /**
   * Moves the temp file into place and returns where it landed: `dest`, or
   * an alternative when `dest` holds another file (see DownloadOptions).
   */
  async commit(sha256: string, options: CommitOptions): Promise<string> {
    const handle = this.handle;
    if (!handle) throw new Error('part file already closed');
    await handle.sync();
    this.handle = undefined;
    await handle.close();
    let dest = this.dest;
    for (let tries = 1; ; tries++) {
      // Again at the last moment: a symlink planted meanwhile must not redirect the move.
      assertNotProtected(dest, this.protectedPaths);
      if (options.existing === 'replace') {
        await rename(this.tempPath, dest);
        break;
      }
      if (await placeWithoutReplacing(this.tempPath, dest)) break;
      if (await holdsBytes(dest, sha256)) break; // our own file from a killed process
      if (!options.alternative || tries > MAX_ALTERNATIVES) {
        throw new DownloadError(
          DOWNLOAD_FAILURES.exists,
          `${dest} already exists and holds another file, which is never replaced`,
          { retryable: false },
        );
      }
      dest = options.alternative(dest, tries);
    }
    this.committed = true;
    await unlink(this.tempPath).catch(() => undefined); // still there unless renamed
    await fsyncDir(path.dirname(dest));
    return dest;
  }

  /** Closes and removes the temp file unless it was committed. Never throws. */
  async discard(): Promise<void> {
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close().catch(() => undefined);
    if (!this.committed) await unlink(this.tempPath).catch(() => undefined);
  }
}

/** `file` is a regular file (not a link) whose sha256 is `sha256`. */
async function holdsBytes(file: string, sha256: string): Promise<boolean> {
  try {
    return (await lstat(file)).isFile() && (await hashFile(file)) === sha256;
  } catch {
    return false;
  }
}
