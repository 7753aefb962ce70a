/** Shared helpers of the emulator tests: real HTTP with fetch against a kit emulator. */
import type { EmulatorOptions, RunningEmulator } from '../../src/emulator/index.js';
import { testEmulator } from '../helpers/index.js';

/** Starts an emulator (seed 42) that is stopped after the current test. */
export function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  return testEmulator({ seed: 42, ...options });
}

export interface Reply {
  status: number;
  headers: Headers;
  // biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary JSON
  body: any;
}

export async function api(
  em: RunningEmulator,
  key: string | undefined,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Reply> {
  const response = await fetch(`${em.baseUrl}${path}`, {
    method,
    headers: {
      ...(key ? { authorization: `Bearer ${key}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
  });
  const text = await response.text();
  return {
    status: response.status,
    headers: response.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

/** Presigns and PUTs `bytes` as `mimeType`; returns the asset URL. */
export async function upload(
  em: RunningEmulator,
  key: string,
  mimeType: string,
  bytes: Buffer,
): Promise<string> {
  const presign = await api(em, key, 'POST', '/assets/presign', {
    mimeType,
    sizeBytes: bytes.length,
  });
  if (presign.status !== 200) throw new Error(`presign failed: ${JSON.stringify(presign.body)}`);
  const put = await fetch(presign.body.uploadUrl, {
    method: 'PUT',
    headers: presign.body.headers,
    body: bytes,
  });
  if (put.status !== 200) throw new Error(`upload failed: ${put.status}`);
  return presign.body.assetUrl as string;
}
