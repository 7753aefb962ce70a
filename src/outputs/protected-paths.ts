/**
 * Paths an output may never land on: the journal and its
 * companions, the model cache, the job file and its inputs. A PNG written
 * over the journal destroys the only record of what was charged, so the
 * check is made twice: by `validate` on what the job file can name, and by
 * the writer on the real target just before it writes.
 *
 * Targets and protected paths are compared in canonical form (symlinks
 * resolved, including one planted in the output folder), and a target inside
 * a protected folder (the journal's lock folder) counts as the folder.
 */
import { lstatSync } from 'node:fs';
import path from 'node:path';
import { canonicalPath, EXIT, IbatchError } from '../shared/index.js';

/** An output would overwrite a protected path: nothing is written, and retrying cannot help. */
export class ProtectedPathError extends IbatchError {
  readonly target: string;

  constructor(target: string, protectedPath: string) {
    super(
      'protected_path',
      `refused to write ${target}: it is the protected file ${protectedPath} (the journal, the model cache, the job file or one of its inputs)`,
      EXIT.invalid,
      { retryable: false },
    );
    this.target = target;
  }
}

/** The protected path `target` would land on (equal to it, or inside it), or undefined. */
export function protectedPathHit(
  target: string,
  protectedPaths: readonly string[],
): string | undefined {
  const real = canonicalTarget(target);
  const canonicals = canonicalProtectedPaths(protectedPaths);
  for (const [i, guarded] of protectedPaths.entries()) {
    const canonical = canonicals[i] ?? canonicalPath(guarded);
    const rel = path.relative(canonical, real);
    const outside = rel === '..' || rel.startsWith(`..${path.sep}`) || path.isAbsolute(rel);
    if (!outside) return guarded;
  }
  return undefined;
}

/**
 * The canonical form of each protected path, taken once per list: a run
 * builds its list once and checks it before and after every file it writes,
 * and resolving every protected path per check was a large share of a
 * download's cost. The target is still resolved at each check (it is what a
 * planted link would change).
 */
const canonicalLists = new WeakMap<readonly string[], readonly string[]>();
function canonicalProtectedPaths(protectedPaths: readonly string[]): readonly string[] {
  let canonicals = canonicalLists.get(protectedPaths);
  if (!canonicals) {
    canonicals = protectedPaths.map((guarded) => canonicalPath(guarded));
    canonicalLists.set(protectedPaths, canonicals);
  }
  return canonicals;
}

/** Throws {@link ProtectedPathError} when `target` would land on a protected path. */
export function assertNotProtected(target: string, protectedPaths: readonly string[]): void {
  const hit = protectedPathHit(target, protectedPaths);
  if (hit !== undefined) throw new ProtectedPathError(target, hit);
}

/**
 * The file a write to `target` would change. A symlink at the target itself is
 * followed (rename would replace the link, but a writer that follows it must
 * not hit the journal either); otherwise the parent's realpath plus the name.
 */
function canonicalTarget(target: string): string {
  try {
    if (lstatSync(target).isSymbolicLink()) return canonicalPath(target);
  } catch {
    // not there yet: its parent decides
  }
  return path.join(canonicalPath(path.dirname(target)), path.basename(target));
}
