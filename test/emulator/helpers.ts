/** Shared helpers of the emulator tests: real HTTP with fetch, deadline polling. */
import { afterEach } from 'vitest';
import {
  type EmulatorOptions,
  type RunningEmulator,
  startEmulator,
} from '../../src/emulator/index.js';

const running = new Set<RunningEmulator>();

afterEach(async () => {
  await Promise.all([...running].map((e) => e.stop()));
  running.clear();
});

/** Starts an emulator that is stopped after the current test. */
export async function emulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const em = await startEmulator({ seed: 42, ...options });
  running.add(em);
  return em;
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

/** Polls `probe` until it returns a value, or fails after `ms`. */
export async function until<T>(
  probe: () => Promise<T | undefined>,
  ms = 5000,
  what = 'condition',
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
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
