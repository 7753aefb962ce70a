/**
 * The output folder is checked before anything is spent: made if missing
 * (`makeFolderSync`, never Node's looping recursive mkdir) and proven to take
 * a file.
 */
import { randomBytes } from 'node:crypto';
import { rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { EXIT, IbatchError, makeFolderSync } from '../shared/index.js';

/**
 * The output folder cannot hold the run's files (not a folder, cannot be
 * made, not writable). A local problem, found before anything is spent: exit 2.
 */
export class OutputFolderError extends IbatchError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('output_folder', message, EXIT.invalid, options);
  }
}

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/**
 * Makes the output folder if needed and proves it takes files: a small file
 * written and removed. Throws OutputFolderError naming the folder and the
 * system's reason.
 */
export function assertWritableFolder(dir: string): void {
  const shown = path.resolve(dir);
  try {
    makeFolderSync(shown);
  } catch (error) {
    throw new OutputFolderError(
      `output folder ${shown} cannot be made (${reason(error)}): choose a folder on a local disk you can write to`,
      { cause: error },
    );
  }
  let isFolder: boolean;
  try {
    isFolder = statSync(shown).isDirectory();
  } catch (error) {
    // A link to nowhere: mkdir met the link (EEXIST), stat its missing target.
    throw new OutputFolderError(`output folder ${shown} cannot be used (${reason(error)})`, {
      cause: error,
    });
  }
  if (!isFolder) throw new OutputFolderError(`output folder ${shown} is not a folder`);
  const probe = path.join(shown, `.ibatch-write-check-${randomBytes(4).toString('hex')}`);
  try {
    writeFileSync(probe, '', { flag: 'wx' });
  } catch (error) {
    throw new OutputFolderError(
      `output folder ${shown} does not take files (${reason(error)}): choose a folder you can write to`,
      { cause: error },
    );
  }
  rmSync(probe, { force: true });
}

function reason(error: unknown): string {
  const code = codeOf(error);
  const words: Record<string, string> = {
    ENOENT: 'the system refuses to create it there',
    ENOTDIR: 'a part of the path is a file',
    EACCES: 'permission denied',
    EPERM: 'not permitted',
    EROFS: 'read-only file system',
    ENOSPC: 'the disk is full',
  };
  return code ? `${code}: ${words[code] ?? 'refused'}` : String(error);
}
