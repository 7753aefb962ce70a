/**
 * Whether an output folder can hold a run's files, judged before anything is
 * spent: every file is written inside the folder (naming.ts `resolveInside`
 * refuses a path through a link that leaves it), so a folder that holds such
 * a link would take the money and then refuse the download; so would a
 * folder the run writes into that does not take files. The folder itself
 * may be a link ("outputs on the big disk"): it is judged where it leads.
 */
import {
  accessSync,
  constants,
  type Dirent,
  lstatSync,
  readdirSync,
  realpathSync,
  statSync,
} from 'node:fs';
import path from 'node:path';

const codeOf = (error: unknown) => (error as NodeJS.ErrnoException | undefined)?.code;

/** A link inside the output folder that leads outside it (or nowhere). */
export interface LeavingLink {
  /** The link, relative to the output folder. */
  readonly link: string;
  /** Where it leads (its real path), or undefined when it leads nowhere. */
  readonly target: string | undefined;
}

/**
 * Why files cannot be written under `outputDir`, or undefined: a part of its
 * path that exists is a file, or the folder is a file (the system would say
 * ENOTDIR or EEXIST half-way through a paid run).
 */
export function outputFolderBlocker(outputDir: string): string | undefined {
  for (let at = path.resolve(outputDir); ; at = path.dirname(at)) {
    let isFolder: boolean;
    try {
      isFolder = statSync(at).isDirectory();
    } catch (error) {
      // Missing (made by the run), a dangling link, or under a file: judge the parent.
      const code = codeOf(error);
      if ((code === 'ENOENT' || code === 'ENOTDIR') && path.dirname(at) !== at) continue;
      return `${at} cannot be read (${codeOf(error) ?? String(error)})`;
    }
    return isFolder ? undefined : `${at} is a file, not a folder`;
  }
}

/** What a walk of the output folder's tree found that would refuse a paid download. */
export interface OutputTreeShape {
  /** Links under the folder (not the folder itself) that lead outside it or nowhere. */
  readonly leaving: readonly LeavingLink[];
  /**
   * Folders the run writes into that this process cannot create files in,
   * relative to the output folder ('' for itself): the folder, and each of
   * `writtenFolders` with everything under it. Other folders of the tree may
   * be another job's (a shared folder) and are left alone.
   */
  readonly unwritable: readonly { readonly folder: string; readonly code: string }[];
}

/**
 * One walk of the tree under `outputDir` (nothing found when it does not
 * exist yet). `writtenFolders` are folders relative to it the job's files go
 * in whatever the item (a step's fixed folder, outputs/naming.ts).
 */
export function outputTreeShape(
  outputDir: string,
  writtenFolders: readonly string[] = [],
): OutputTreeShape {
  let root: string;
  let entries: Dirent[];
  try {
    root = realpathSync(outputDir);
    entries = readdirSync(root, { recursive: true, withFileTypes: true });
  } catch {
    return { leaving: [], unwritable: [] };
  }
  const written = writtenFolders.filter((folder) => folder !== '');
  const isWritten = (rel: string) =>
    written.some((folder) => rel === folder || rel.startsWith(`${folder}${path.sep}`));
  const leaving: LeavingLink[] = [];
  const unwritable: { folder: string; code: string }[] = [];
  const checkWritable = (at: string) => {
    const code = notWritable(at);
    if (code !== undefined) unwritable.push({ folder: path.relative(root, at), code });
  };
  checkWritable(root);
  for (const entry of entries) {
    // Most entries are the run's files: judged by their type alone.
    if (!entry.isDirectory() && !entry.isSymbolicLink()) continue;
    const at = path.join(entry.parentPath, entry.name);
    if (entry.isDirectory()) {
      if (isWritten(path.relative(root, at))) checkWritable(at);
      continue;
    }
    let target: string | undefined;
    try {
      target = realpathSync(at);
    } catch {
      target = undefined;
    }
    const rel = target === undefined ? '..' : path.relative(root, target);
    if (rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel)) {
      leaving.push({ link: path.relative(root, at), target });
    }
  }
  return { leaving, unwritable };
}

/** The error code when this process cannot create files in `folder` (permissions, a read-only disk). */
function notWritable(folder: string): string | undefined {
  try {
    accessSync(folder, constants.W_OK | constants.X_OK);
    return undefined;
  } catch (error) {
    return codeOf(error) ?? String(error);
  }
}

/** Whether `file` is a plain file with one name (a hard link has more: its bytes change with another name's). */
export function isSingleLinkedFile(file: string): boolean {
  try {
    const stat = lstatSync(file);
    return stat.isFile() && stat.nlink === 1;
  } catch {
    return false;
  }
}
