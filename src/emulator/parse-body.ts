/** A request's JSON body: read, parsed, and checked against a contract zod schema; a 400 names the first bad field. */
import type { IncomingMessage } from 'node:http';
import type { z } from 'zod';
import { validationError } from './http-error.js';

export function parseBody<T extends z.ZodType>(schema: T, body: unknown): z.infer<T> {
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issues = result.error.issues.map((issue) => {
    const keys = issue.code === 'unrecognized_keys' ? issue.keys : [];
    const path = [...issue.path, ...(keys.length === 1 ? keys : [])].map(String).join('.');
    return { path: path || 'body', message: issue.message };
  });
  const first = issues[0] ?? { path: 'body', message: 'invalid' };
  throw validationError(`${first.path}: ${first.message}`, issues);
}

/** Largest JSON request body accepted (well above any valid request). */
export const MAX_JSON_BODY = 1024 * 1024;

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
