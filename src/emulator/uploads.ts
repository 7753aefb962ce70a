/**
 * Presigned uploads. `POST /assets/presign` creates a pending asset; the
 * client PUTs the bytes to the separate upload origin within the lifetime,
 * with the same Content-Type and exactly `sizeBytes` bytes. Only then is the
 * `assetUrl` usable. A PUT carrying Authorization is recorded (never its
 * value) and accepted or rejected per `behaviour.uploadAuthorization`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AssetUploadRequestSchema, MEDIA_TYPES, UPLOAD_MEDIA_TYPES } from '../contract/index.js';
import type { Answer, ApiCall } from './call.js';
import type { EmulatorContext } from './context.js';
import { EmulatorHttpError, notFound, validationError } from './http-error.js';
import { parseBody } from './parse-body.js';
import type { AssetRecord } from './state.js';

/**
 * Supported MIME types and the extension of their asset URL: the contract's
 * uploadable types, plus `audio/x-wav`, the one alias the service takes.
 */
export const SUPPORTED_MIME_TYPES: Readonly<Record<string, string>> = Object.fromEntries([
  ...UPLOAD_MEDIA_TYPES.map((t) => [t.mime, t.ext]),
  ['audio/x-wav', MEDIA_TYPES.wav.ext],
]);

export function presignAsset(ctx: EmulatorContext, call: ApiCall): Answer {
  const request = parseBody(AssetUploadRequestSchema, call.body);
  const mimeType = request.mimeType.toLowerCase();
  const ext = SUPPORTED_MIME_TYPES[mimeType];
  if (!ext) {
    throw validationError(`mimeType: unsupported type ${request.mimeType}`, {
      supported: Object.keys(SUPPORTED_MIME_TYPES),
    });
  }
  const lifetime = ctx.options.presignLifetimeSeconds;
  const asset: AssetRecord = {
    id: ctx.newId(),
    accountId: call.account.id,
    mimeType,
    ext,
    sizeBytes: request.sizeBytes,
    token: randomBytes(16).toString('hex'),
    expiresAt: Date.now() + lifetime * 1000,
    uploaded: false,
  };
  call.account.assets.set(asset.id, asset);
  const assetUrl = `${ctx.mainOrigin}/assets/${asset.id}.${ext}`;
  return {
    status: 200,
    body: {
      uploadUrl: `${ctx.uploadOrigin}/upload/${asset.id}?token=${asset.token}`,
      assetUrl,
      expiresInSeconds: Math.max(1, Math.round(lifetime)),
      method: 'PUT',
      headers: { 'Content-Type': mimeType },
      browserUploadUrl: `${ctx.mainOrigin}/browser-upload/${asset.id}?token=${asset.token}`,
      assetId: asset.id,
    },
  };
}

function findAsset(ctx: EmulatorContext, id: string): AssetRecord | undefined {
  for (const account of ctx.store.accounts.values()) {
    const asset = account.assets.get(id);
    if (asset) return asset;
  }
  return undefined;
}

/** Handles every request to the upload origin. */
export function handleUpload(
  ctx: EmulatorContext,
  req: IncomingMessage,
  res: ServerResponse,
): void {
  const url = new URL(req.url ?? '/', ctx.uploadOrigin);
  const match = /^\/upload\/([0-9a-f-]{36})$/.exec(url.pathname);
  const asset = match ? findAsset(ctx, match[1] ?? '') : undefined;
  if (req.headers.authorization !== undefined) {
    ctx.stats.uploadAuthorization.push({
      path: url.pathname,
      ...(asset ? { assetId: asset.id, accountId: asset.accountId } : {}),
      at: new Date().toISOString(),
    });
  }
  const reject = (error: EmulatorHttpError) => {
    req.resume();
    error.send(res);
  };
  if (!asset || url.searchParams.get('token') !== asset.token) {
    reject(notFound('upload URL'));
    return;
  }
  if (req.method !== 'PUT') {
    reject(new EmulatorHttpError('method_not_allowed', `method: expected PUT, got ${req.method}`));
    return;
  }
  if (Date.now() > asset.expiresAt) {
    reject(new EmulatorHttpError('upload_expired', 'the presigned upload URL has expired'));
    return;
  }
  if (req.headers.authorization !== undefined && ctx.behaviour.uploadAuthorization === 'reject') {
    reject(validationError('Authorization: the upload must not carry the API key'));
    return;
  }
  const contentType = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (contentType !== asset.mimeType) {
    reject(
      validationError(`Content-Type: expected ${asset.mimeType}, got ${contentType || 'none'}`),
    );
    return;
  }
  const chunks: Buffer[] = [];
  let received = 0;
  let tooBig = false;
  req.on('data', (chunk: Buffer) => {
    received += chunk.length;
    if (received > asset.sizeBytes) tooBig = true;
    else chunks.push(chunk);
  });
  req.on('end', () => {
    if (tooBig || received !== asset.sizeBytes) {
      validationError(`body: expected ${asset.sizeBytes} bytes, got ${received}`).send(res);
      return;
    }
    asset.bytes = Buffer.concat(chunks);
    asset.uploaded = true;
    res.writeHead(200, { 'Content-Length': '0' }).end();
  });
  req.on('error', () => res.destroy());
}
