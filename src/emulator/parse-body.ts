/** Runs a contract zod schema over a request body; a 400 names the first bad field. */
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
