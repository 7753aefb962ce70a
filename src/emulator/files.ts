/**
 * Unauthenticated downloads on the main origin (ids are unguessable UUIDs):
 * `/files/<generationId>/0.png|jpg|webp|mp4` (only once succeeded),
 * `/files/lora/<trainingId>.safetensors`, `/assets/<assetId>.<ext>` (once
 * uploaded) and `/browser-upload/<assetId>` (a minimal upload page).
 */
import type { ServerResponse } from 'node:http';
import { MEDIA_TYPES } from '../contract/index.js';
import type { EmulatorContext } from './context.js';
import { notFound } from './http-error.js';
import { jpegFor, webpFor } from './image-formats.js';
import type { ImageFormat } from './options.js';
import { pngFor, videoFor } from './png.js';
import type { AccountState } from './state.js';
import { VIDEO_MIME } from './video-clip.js';

/**
 * Middle segments of output URLs that misbehave (`outputUrlStyle`,
 * options.ts): a 307 to the upload origin, an HTML page, HTML bytes
 * declared as the output's media type.
 */
export const OUTPUT_SEGMENTS = {
  redirect: 'redirect-away',
  html: 'html-page',
  notMedia: 'not-media',
} as const;

/** The extension of each image format's output URL (`imageFormat`). */
export const IMAGE_EXT: Readonly<Record<ImageFormat, string>> = {
  png: MEDIA_TYPES.png.ext,
  jpeg: MEDIA_TYPES.jpeg.ext,
  webp: MEDIA_TYPES.webp.ext,
};

/** Each output extension's type and per-generation bytes. */
const OUTPUT_MEDIA: Readonly<Record<string, { mime: string; bytes: (id: string) => Buffer }>> = {
  [MEDIA_TYPES.png.ext]: { mime: MEDIA_TYPES.png.mime, bytes: pngFor },
  [MEDIA_TYPES.jpeg.ext]: { mime: MEDIA_TYPES.jpeg.mime, bytes: jpegFor },
  [MEDIA_TYPES.webp.ext]: { mime: MEDIA_TYPES.webp.mime, bytes: webpFor },
  [MEDIA_TYPES.mp4.ext]: { mime: VIDEO_MIME, bytes: videoFor },
};

/** What a CDN's error page looks like. */
const NOT_MEDIA = Buffer.from(
  '<!doctype html><html><head><title>Access denied</title></head><body>Access denied</body></html>\n',
);

function send(res: ServerResponse, type: string, bytes: Buffer, head: boolean): void {
  res.writeHead(200, {
    'Content-Type': type,
    'Content-Length': bytes.length,
    'Cache-Control': 'no-store',
  });
  res.end(head ? undefined : bytes);
}

function missing(res: ServerResponse): void {
  notFound('file').send(res);
}

function each<T>(ctx: EmulatorContext, pick: (a: AccountState) => T | undefined): T | undefined {
  for (const account of ctx.store.accounts.values()) {
    const found = pick(account);
    if (found !== undefined) return found;
  }
  return undefined;
}

/** Serves a file route; returns false when the path is not a file route. */
export function serveFile(
  ctx: EmulatorContext,
  path: string,
  res: ServerResponse,
  head: boolean,
): boolean {
  // The optional middle segment is the one an `outputUrlStyle` adds.
  const output = /^\/files\/([0-9a-f-]{36})\/(?:([^/]+)\/)?0\.(png|jpg|webp|mp4)$/.exec(path);
  if (output) {
    const id = output[1] ?? '';
    const ext = output[3] ?? '';
    const record = each(ctx, (a) => a.generations.get(id));
    const media = OUTPUT_MEDIA[ext];
    // The format is the URL's (`imageFormat` when it was handed out); the kind must match.
    const kindMatches = (record?.kind === 'image') === (ext !== 'mp4');
    if (record?.outcome !== 'success' || ctx.now() < record.terminalAt || !kindMatches || !media) {
      missing(res);
    } else if (output[2] === OUTPUT_SEGMENTS.redirect) {
      res.writeHead(307, { Location: `${ctx.uploadOrigin}/files/${id}/0.${ext}` });
      res.end();
    } else if (output[2] === OUTPUT_SEGMENTS.html) {
      send(res, 'text/html; charset=utf-8', NOT_MEDIA, head);
    } else if (output[2] === OUTPUT_SEGMENTS.notMedia) {
      send(res, media.mime, NOT_MEDIA, head);
    } else {
      const delay = ctx.behaviour.outputDelayMs;
      if (delay > 0) setTimeout(() => send(res, media.mime, media.bytes(id), head), delay);
      else send(res, media.mime, media.bytes(id), head);
    }
    return true;
  }
  const lora = /^\/files\/lora\/([0-9a-f-]{36})\.safetensors$/.exec(path);
  if (lora) {
    const record = each(ctx, (a) => a.trainings.get(lora[1] ?? ''));
    if (!record || record.fails || ctx.now() < record.terminalAt) missing(res);
    else
      send(
        res,
        'application/octet-stream',
        Buffer.from(`ibatch emulator LoRA ${record.id}\n`),
        head,
      );
    return true;
  }
  const asset = /^\/assets\/([0-9a-f-]{36})\.\w+$/.exec(path);
  if (asset) {
    const record = each(ctx, (a) => a.assets.get(asset[1] ?? ''));
    if (!record?.uploaded || !record.bytes) missing(res);
    else send(res, record.mimeType, record.bytes, head);
    return true;
  }
  const page = /^\/browser-upload\/([0-9a-f-]{36})$/.exec(path);
  if (page) {
    const html = `<!doctype html><meta charset="utf-8"><title>Upload</title><p>Browser upload for asset ${page[1]}: PUT the file to the presigned uploadUrl.</p>`;
    send(res, 'text/html; charset=utf-8', Buffer.from(html), head);
    return true;
  }
  return false;
}
