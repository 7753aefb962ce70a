/**
 * Readable names go to the current output (interface: "Re-running"). When a
 * newer output of an item is given the readable name an older output of the
 * same item holds, the older file (and its provenance sidecar) is moved to
 * its suffixed name first, and the journal records where it now is. Bytes
 * are never rewritten or deleted: each move is a hard link to the new name,
 * then the old name removed, so at every instant at least one name holds
 * them.
 *
 * A kill part-way is finished by whoever comes next: the move is repeated
 * (a link already in place, or a name already gone, is the move done), and
 * the download repair path finds a file the journal places at its readable
 * name sitting at its suffixed name, and records the move instead of
 * downloading it again (`finishInterruptedMove`).
 */
import { linkSync, statSync, unlinkSync } from 'node:fs';
import type { Journal, OutputRecord } from '../journal/index.js';
import { resolveInside } from '../outputs/index.js';
import { sidecarPathOf } from '../provenance/index.js';
import { hashFile } from '../uploads/index.js';

/** An output the journal knows by run, item and number. */
export interface OutputKey {
  readonly runId: string;
  readonly itemKey: string;
  readonly n: number;
}

/**
 * Moves `held`'s file from `from` to `aside` (paths relative to the output
 * folder) with its sidecar, then records it. False, with nothing moved, when
 * `aside` holds another file (the caller picks another name).
 */
export function moveAside(
  journal: Journal,
  outputDir: string,
  held: OutputKey,
  from: string,
  aside: string,
): boolean {
  const source = resolveInside(outputDir, from);
  const target = resolveInside(outputDir, aside);
  // The aside name holds another file (a source already gone: an interrupted move).
  if (exists(source) && exists(target) && !sameFile(source, target)) return false;
  // The sidecar first: the newer output's sidecar needs its name, and a kill
  // before the file moves leaves the move to be repeated. One whose new name
  // is taken stays where it is.
  moveNoReplace(sidecarPathOf(source), sidecarPathOf(target));
  if (!moveNoReplace(source, target)) return false;
  journal.moveOutputFile(held.runId, held.itemKey, held.n, aside);
  return true;
}

/**
 * For an output whose recorded file is missing: when `aside` (its suffixed
 * name) holds its bytes, a move was interrupted after the file moved and
 * before the journal learnt it: records the move. True when it did.
 */
export async function finishInterruptedMove(
  journal: Journal,
  outputDir: string,
  output: Pick<OutputRecord, 'runId' | 'itemKey' | 'n' | 'sha256'>,
  aside: string,
): Promise<boolean> {
  const target = resolveInside(outputDir, aside);
  try {
    if (!output.sha256 || (await hashFile(target)) !== output.sha256) return false;
  } catch {
    return false;
  }
  journal.moveOutputFile(output.runId, output.itemKey, output.n, aside);
  return true;
}

/**
 * `source` to `target` without replacing a file: false when `target` is
 * another file, else true once `target` holds the bytes and `source` is
 * gone. A `source` already gone counts as moved: an interrupted move, or a
 * file removed by hand (the journal then says where it belongs, and the
 * repair path downloads it there while its URL serves it).
 */
function moveNoReplace(source: string, target: string): boolean {
  try {
    linkSync(source, target);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return true;
    if (code !== 'EEXIST' || !sameFile(source, target)) return false;
  }
  try {
    unlinkSync(source);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return true;
}

function sameFile(a: string, b: string): boolean {
  try {
    const x = statSync(a);
    const y = statSync(b);
    return x.ino === y.ino && x.dev === y.dev;
  } catch {
    return false;
  }
}

function exists(file: string): boolean {
  try {
    statSync(file);
    return true;
  } catch {
    return false;
  }
}
