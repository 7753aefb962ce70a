import { canonicalServiceUrl } from '../../shared/index.js';
import { type AssetRecord, assetRecordSchema } from '../records.js';
import type { JournalDb } from '../sql.js';
import { ASSET_COLUMNS } from './columns.js';

/**
 * An uploaded file's asset URL, by content hash, within a scope (service base
 * URL + account fingerprint): an edited file has a new hash and is uploaded
 * anew; another account never reuses this account's assets.
 */
export function findAsset(j: JournalDb, scope: string, sha256: string): AssetRecord | undefined {
  const row = j
    .stmt(`SELECT ${ASSET_COLUMNS} FROM assets WHERE scope = ? AND sha256 = ?`)
    .get(scope, sha256);
  return row === undefined ? undefined : assetRecordSchema.parse(row);
}

export type NewAsset = Omit<AssetRecord, 'uploadedAt'> & { readonly uploadedAt?: number };

/** Records (or refreshes) an uploaded asset. */
export function recordAsset(j: JournalDb, asset: NewAsset): void {
  j.stmt(
    `INSERT INTO assets (scope, sha256, mime_type, size, asset_url, uploaded_at)
     VALUES (@scope, @sha256, @mimeType, @size, @assetUrl, @uploadedAt)
     ON CONFLICT (scope, sha256) DO UPDATE SET mime_type = excluded.mime_type,
       size = excluded.size, asset_url = excluded.asset_url, uploaded_at = excluded.uploaded_at`,
  ).run({ ...asset, uploadedAt: asset.uploadedAt ?? j.now() });
}

/**
 * Asset URLs the service at `service` (a base URL) returned to any account
 * in this journal: where that service serves its assets (preflight checks).
 */
export function assetUrlsOfService(j: JournalDb, service: string): string[] {
  const prefix = `${canonicalServiceUrl(service)}#`;
  return j
    .stmt('SELECT DISTINCT asset_url AS url FROM assets WHERE substr(ib_scope(scope), 1, ?) = ?')
    .all(prefix.length, prefix)
    .map((row) => (row as { url: string }).url);
}
