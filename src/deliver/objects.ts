/**
 * What a delivery sends: each chosen output file under `PREFIX/<file>`, its
 * provenance sidecar `<file>.json` when the one beside it is its own (never
 * a link or a foreign file of that name), and last the manifest
 * of exactly those outputs (`manifest.jsonl`, `manifest.csv`), beside the
 * rows other jobs delivered to the same prefix (shared-prefix.ts), so a
 * reader who finds the manifest finds every file it names. Files are hashed as they
 * are on disk now: the sha256 each object carries is that of its bytes.
 */
import { existsSync, statSync } from 'node:fs';
import { uploadTypeOfFileName } from '../contract/index.js';
import { objectKey, type S3Destination } from '../job/index.js';
import {
  MANIFEST_CSV,
  MANIFEST_JSONL,
  type ManifestRow,
  renderManifest,
  resolveInside,
} from '../outputs/index.js';
import { ownSidecarOf, sidecarPathOf } from '../provenance/index.js';
import { sha256Hex } from '../shared/index.js';
import { hashFile } from '../uploads/index.js';
import type { StoreObject } from './s3-store.js';

export interface DeliveryPlan {
  /** Outputs and sidecars, sent first, in any order. */
  readonly files: readonly StoreObject[];
  /** The output rows delivered. */
  readonly rows: readonly ManifestRow[];
  /** Chosen outputs whose file is no longer in the output folder (left out, named in the result). */
  readonly missing: readonly string[];
}

export async function planDelivery(
  chosen: readonly ManifestRow[],
  outputDir: string,
  destination: S3Destination,
): Promise<DeliveryPlan> {
  const files: StoreObject[] = [];
  const rows: ManifestRow[] = [];
  const missing: string[] = [];
  for (const row of chosen) {
    const file = row.file ?? '';
    const path = resolveInside(outputDir, file);
    if (!existsSync(path)) {
      missing.push(file);
      continue;
    }
    rows.push(row);
    const contentType =
      row.contentType ?? uploadTypeOfFileName(file)?.mime ?? 'application/octet-stream';
    files.push(await fileObject(destination, file, path, contentType));
    const sidecar = ownSidecarOf(outputDir, row);
    if (sidecar) {
      files.push(await fileObject(destination, sidecarPathOf(file), sidecar, 'application/json'));
    }
  }
  return { files, rows, missing };
}

/** The two manifests of `rows`, sent once every file they name is there. */
export function manifestObjects(
  destination: S3Destination,
  rows: readonly ManifestRow[],
): StoreObject[] {
  const manifest = renderManifest(rows);
  return [
    memoryObject(destination, MANIFEST_JSONL, manifest.jsonl, 'application/x-ndjson'),
    memoryObject(destination, MANIFEST_CSV, manifest.csv, 'text/csv; charset=utf-8'),
  ];
}

/** The manifest's key at the destination. */
export const manifestKey = (destination: S3Destination) => objectKey(destination, MANIFEST_JSONL);

async function fileObject(
  destination: S3Destination,
  file: string,
  path: string,
  contentType: string,
): Promise<StoreObject> {
  return {
    bucket: destination.bucket,
    key: objectKey(destination, file),
    source: { path },
    bytes: statSync(path).size,
    contentType,
    sha256: await hashFile(path),
  };
}

function memoryObject(
  destination: S3Destination,
  file: string,
  text: string,
  contentType: string,
): StoreObject {
  const body = Buffer.from(text, 'utf8');
  return {
    bucket: destination.bucket,
    key: objectKey(destination, file),
    source: { body },
    bytes: body.length,
    contentType,
    sha256: sha256Hex(text),
  };
}
