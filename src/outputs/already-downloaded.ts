/** Resume support: an output already on disk with the recorded hash is not fetched again. */
import { lstat } from 'node:fs/promises';
import { hashFile } from '../uploads/index.js';

/**
 * True when `dest` is a regular file whose sha256 is `sha256` (the value the
 * journal recorded when it was downloaded). A missing, edited or truncated file
 * answers false, so it is downloaded again.
 */
export async function isAlreadyDownloaded(
  dest: string,
  sha256: string | undefined,
): Promise<boolean> {
  if (!sha256) return false;
  try {
    const stat = await lstat(dest);
    if (!stat.isFile()) return false;
    return (await hashFile(dest)) === sha256.toLowerCase();
  } catch {
    return false;
  }
}
