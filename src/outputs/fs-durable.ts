/**
 * Small durable-write helpers: write to a temp file in the same folder, fsync,
 * rename over the target, fsync the folder, so a crash leaves either the old
 * file or the new one, never a torn one.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { link, lstat, open, rename, rm } from 'node:fs/promises';
import path from 'node:path';

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
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${randomBytes(6).toString('hex')}`);
  const fd = openSync(temp, 'wx');
  let open = true;
  try {
    writeSync(fd, typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
    fsyncSync(fd);
    open = false;
    closeSync(fd);
    renameSync(temp, file);
  } catch (error) {
    if (open) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {
      // already renamed or never created
    }
    throw error;
  }
  fsyncDirSync(dir);
}

/**
 * Writes `file` atomically unless it exists: the content is fsynced in a temp
 * file then placed with `placeWithoutReplacing`. Returns false (writing
 * nothing) when `file` exists.
 */
export async function writeFileExclusive(file: string, content: string): Promise<boolean> {
  const dir = path.dirname(file);
  const temp = path.join(dir, `.${path.basename(file)}.tmp-${randomBytes(6).toString('hex')}`);
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
