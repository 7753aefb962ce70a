/**
 * Output files for the page's previews. Served only when the path is a file
 * the listing shows (never the journal, the manifest or anything else in the
 * folder) AND `resolveInside` keeps it inside the output folder: no `..`, no
 * absolute path, no symbolic link (one planted in the folder after the run
 * is refused even though its name is listed).
 */
import { createReadStream, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { uploadTypeOfFileName } from '../../contract/index.js';
import { resolveInside } from '../../outputs/index.js';
import type { ReviewListing } from './listing.js';

const SERVABLE = /^(image|video|audio)\/[a-z0-9.+-]+$/i;

export function serveFile(
  res: ServerResponse,
  listing: ReviewListing,
  encoded: string,
  headOnly: boolean,
) {
  let file: string;
  try {
    file = encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    return refuse(res, 400, 'bad path');
  }
  const row = listing.outputs.find((o) => o.file === file);
  if (!row) return refuse(res, 404, 'not an output of this job');
  let absolute: string;
  try {
    absolute = resolveInside(listing.outputDir, file);
  } catch {
    return refuse(res, 403, 'outside the output folder');
  }
  let size: number;
  try {
    const stat = statSync(absolute);
    if (!stat.isFile()) return refuse(res, 404, 'not a file');
    size = stat.size;
  } catch {
    return refuse(res, 404, 'no such file');
  }
  const type =
    row.contentType && SERVABLE.test(row.contentType)
      ? row.contentType
      : (uploadTypeOfFileName(file)?.mime ?? 'application/octet-stream');
  res.writeHead(200, { 'Content-Type': type, 'Content-Length': size });
  if (headOnly) {
    res.end();
    return;
  }
  const stream = createReadStream(absolute);
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

function refuse(res: ServerResponse, status: number, why: string): void {
  const body = JSON.stringify({ error: why });
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8' });
  res.end(body);
}
