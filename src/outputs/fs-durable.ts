/**
 * Small durable-write helpers: write to a temp file in the same folder, fsync,
 * rename over the target, fsync the folder, so a crash leaves either the old
 * file or the new one, never a torn one.
 */
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { link, lstat, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { tempBeside } from '../shared/index.js';

/** fsync a folder so a rename inside it survives power loss (no-op where unsupported). */
export async function fsyncDir(dir: string): Promise<void> {
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // Windows cannot open folders for sync; the rename is still atomic there.
  }
}

export function fsyncDirSync(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // see fsyncDir
  }
}

/** Replaces `file` with `content` atomically (temp + fsync + rename + folder fsync). */
export function writeFileAtomicSync(file: string, content: string | Uint8Array): void {
  const out = new AtomicFileSync(file);
  try {
    out.write(content);
  } catch (error) {
    out.abort();
    throw error;
  }
  out.commit();
}

/** Text gathered before a write: few system calls, and never more than this in memory. */
export const FLUSH_BYTES = 1 << 20;

/** The most bytes a string of `length` UTF-16 units takes in UTF-8. */
const MAX_UTF8_PER_UNIT = 3;

/**
 * A file written in pieces through a buffer of `FLUSH_BYTES`: the manifest's
 * rewrite and its row spool write 100,000 rows without their whole text in
 * memory, and the report's pages theirs without joining them first. Each
 * piece is encoded straight into the buffer: joining the pieces and encoding
 * the result took twice as long (docs/benchmarks.md).
 */
export class FileWriterSync {
  #fd: number | undefined;
  readonly #buffer = Buffer.allocUnsafe(FLUSH_BYTES);
  #used = 0;

  /** `flags`: `w` replaces the file, `wx` refuses one that exists. */
  constructor(file: string, flags: 'w' | 'wx') {
    this.#fd = openSync(file, flags);
  }

  write(content: string | Uint8Array): void {
    if (typeof content === 'string') {
      const most = content.length * MAX_UTF8_PER_UNIT;
      if (most > this.#buffer.length - this.#used) this.flush();
      if (most <= this.#buffer.length) {
        this.#used += this.#buffer.write(content, this.#used);
        return;
      }
    } else this.flush();
    // Longer than the buffer: written alone.
    writeSync(this.openFd(), typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
  }

  /** Writes what the buffer holds. */
  flush(): void {
    if (this.#used === 0) return;
    const used = this.#used;
    this.#used = 0;
    writeSync(this.openFd(), this.#buffer, 0, used);
  }

  /** Writes what the buffer holds and closes the file. */
  close(): void {
    this.flush();
    this.closeFd();
  }

  /** Forgets what the buffer holds. */
  protected discard(): void {
    this.#used = 0;
  }

  protected openFd(): number {
    if (this.#fd === undefined) throw new Error('the file is closed');
    return this.#fd;
  }

  protected closeFd(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd !== undefined) closeSync(fd);
  }
}

/** A `FileWriterSync` of a temp file beside `file` (`tempBeside`); `abort` closes and removes it. */
export class TempFileSync extends FileWriterSync {
  readonly temp: string;

  constructor(file: string) {
    const temp = tempBeside(file);
    super(temp, 'wx');
    this.temp = temp;
  }

  /** Closes and removes the temp file (nothing to remove once renamed). */
  abort(): void {
    this.discard();
    this.closeFd();
    try {
      unlinkSync(this.temp);
    } catch {
      // already renamed or never created
    }
  }
}

/**
 * A file written in pieces, then put in place as `writeFileAtomicSync` does
 * (its temp file fsynced, renamed over it, the folder fsynced). `abort` (or
 * any failure of `commit`) removes the temp file.
 */
export class AtomicFileSync extends TempFileSync {
  readonly #file: string;

  constructor(file: string) {
    super(file);
    this.#file = file;
  }

  commit(): void {
    try {
      this.flush();
      fsyncSync(this.openFd());
      this.closeFd();
      renameSync(this.temp, this.#file);
    } catch (error) {
      this.abort();
      throw error;
    }
    fsyncDirSync(path.dirname(this.#file));
  }
}

/**
 * Writes `file` atomically unless it exists: the content is fsynced in a temp
 * file then placed with `placeWithoutReplacing`. Returns false (writing
 * nothing) when `file` exists.
 */
export async function writeFileExclusive(file: string, content: string): Promise<boolean> {
  const dir = path.dirname(file);
  const temp = tempBeside(file);
  try {
    const handle = await open(temp, 'wx');
    try {
      await handle.write(Buffer.from(content, 'utf8'));
      await handle.sync();
    } finally {
      await handle.close();
    }
    if (!(await placeWithoutReplacing(temp, file))) return false;
  } finally {
    await rm(temp, { force: true });
  }
  await fsyncDir(dir);
  return true;
}

/**
 * Hard-links `temp` to `dest`, which fails (false) when `dest` exists: no
 * window in which another file could be overwritten. Where hard links are
 * not supported, a checked rename (the window is only the check). `temp`
 * stays in place when it was linked: the caller removes it.
 */
export async function placeWithoutReplacing(temp: string, dest: string): Promise<boolean> {
  try {
    await link(temp, dest);
    return true;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code !== 'EPERM' && code !== 'ENOTSUP' && code !== 'ENOSYS' && code !== 'EXDEV') {
      throw error;
    }
  }
  if (
    await lstat(dest).then(
      () => true,
      () => false,
    )
  )
    return false;
  await rename(temp, dest);
  return true;
}
