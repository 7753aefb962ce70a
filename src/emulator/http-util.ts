/** Small node:http helpers shared by the servers. */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { validationError } from './http-error.js';

/** Largest JSON request body accepted (well above any valid request). */
export const MAX_JSON_BODY = 1024 * 1024;

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string | number> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

export function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_JSON_BODY) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_JSON_BODY) reject(validationError(`body: larger than ${MAX_JSON_BODY} bytes`));
      else resolve(Buffer.concat(chunks));
    });
    req.on('error', reject);
  });
}

export function parseJson(raw: Buffer): unknown {
  if (raw.length === 0) throw validationError('body: expected a JSON object, got an empty body');
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    throw validationError('body: invalid JSON');
  }
}

export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.');
}
