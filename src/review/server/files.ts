/**
 * Output files for the page's previews. Served only when the path is a file
 * the listing shows (never the journal, the manifest or anything else in the
 * folder) AND `resolveInside` keeps it inside the output folder: no `..`, no
 * absolute path, no symbolic link (one planted in the folder after the run
 * is refused even though its name is listed) AND its bytes are those the
 * journal recorded (size and sha256): a hard link planted under a listed
 * name (to /etc/passwd, say) shows another file's bytes, and is refused.
 * The file is opened once (no link followed) and checked and served through
 * that one descriptor, so it cannot be swapped in between.
 */
import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { uploadTypeOfFileName } from '../../contract/index.js';
import { resolveInside } from '../../outputs/index.js';
import type { RecordedFile, ReviewListing } from './listing.js';

const SERVABLE = /^(image|video|audio)\/[a-z0-9.+-]+$/i;

export async function serveFile(
  res: ServerResponse,
  listing: ReviewListing,
  encoded: string,
  headOnly: boolean,
): Promise<void> {
  let file: string;
  try {
    file = encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    return refuse(res, 400, 'bad path');
  }
  const row = listing.outputs.find((o) => o.file === file);
  const recorded = listing.recorded.get(file);
  if (!row || !recorded) return refuse(res, 404, 'not an output of this job');
  let absolute: string;
  try {
    absolute = resolveInside(listing.outputDir, file);
  } catch {
    return refuse(res, 403, 'outside the output folder');
  }
  let handle: FileHandle;
  try {
    handle = await open(absolute, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch {
    return refuse(res, 404, 'no such file');
  }
  let size: number;
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return await closeAndRefuse(handle, res, 404, 'not a file');
    if (!(await holdsRecorded(handle, stat, recorded))) {
      return await closeAndRefuse(handle, res, 403, 'not the file the run recorded');
    }
    size = stat.size;
  } catch {
    return await closeAndRefuse(handle, res, 404, 'no such file');
  }
  const type =
    row.contentType && SERVABLE.test(row.contentType)
      ? row.contentType
      : (uploadTypeOfFileName(file)?.mime ?? 'application/octet-stream');
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': size });
  if (headOnly) {
    await handle.close();
    res.end();
    return;
  }
  const stream = createReadStream('', { fd: handle, start: 0 });
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/**
 * Files already checked, by what changes when their bytes do (device, inode,
 * size, modification and change times): a page showing hundreds of previews
 * hashes each file once, not on every request.
 */
const verified = new Map<string, string>();
const MAX_VERIFIED = 100_000;

async function holdsRecorded(
  handle: FileHandle,
  stat: Awaited<ReturnType<FileHandle['stat']>>,
  recorded: RecordedFile,
): Promise<boolean> {
  if (recorded.bytes !== undefined && stat.size !== recorded.bytes) return false;
  const id = `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`;
  const want = recorded.sha256.toLowerCase();
  if (verified.get(id) === want) return true;
  const hash = createHash('sha256');
  for await (const chunk of handle.createReadStream({ start: 0, autoClose: false })) {
    hash.update(chunk as Buffer);
  }
  const sha256 = hash.digest('hex');
  if (sha256 !== want) return false;
  if (verified.size >= MAX_VERIFIED) verified.clear();
  verified.set(id, sha256);
  return true;
}

async function closeAndRefuse(
  handle: FileHandle,
  res: ServerResponse,
  status: number,
  why: string,
): Promise<void> {
  await handle.close().catch(() => undefined);
  refuse(res, status, why);
}

function refuse(res: ServerResponse, status: number, why: string): void {
  const body = JSON.stringify({ error: why });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(body);
}
