/** exiftool, the independent reader the provenance tests check embedded metadata with. */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const EXIFTOOL = '/usr/bin/exiftool';

/** Whether exiftool is installed (Debian's libimage-exiftool-perl); tests needing it show as skipped without it. */
export const hasExiftool = existsSync(EXIFTOOL);

/** Every tag exiftool reads from `file`, grouped (`-G1`), duplicates kept (`-a`). */
export function exifTags(file: string): Record<string, unknown> {
  const [tags] = JSON.parse(
    execFileSync(EXIFTOOL, ['-j', '-a', '-G1', file], { encoding: 'utf8' }),
  ) as [Record<string, unknown>];
  return tags;
}
