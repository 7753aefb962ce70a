/**
 * `s3://BUCKET/PREFIX`, the one spelling of a delivery destination (the
 * `--deliver` flag, `deliver:` in the job, `ibatch deliver --to`). The bucket
 * follows S3's naming rules, which MinIO, Ceph and R2 share; the prefix is a
 * folder-like key prefix without empty or dot segments, so `PREFIX/<file>`
 * keys read the same in every browser of the bucket.
 */
import { quote } from '../shared/index.js';

export interface S3Destination {
  readonly bucket: string;
  /** Key prefix without leading or trailing `/` ('' for the bucket's root). */
  readonly prefix: string;
  /** The normalised `s3://bucket/prefix` (for messages and JSON). */
  readonly url: string;
}

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Why `value` is not an `s3://BUCKET/PREFIX` URL, or undefined when it is one. */
export function s3UrlProblem(value: string): string | undefined {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(value);
  if (!match) return `must be an s3://BUCKET/PREFIX URL, got ${quote(value)}`;
  const bucket = match[1] ?? '';
  // Never quoted back: what precedes the `@` is an access key and its secret.
  if (bucket.includes('@')) {
    return 'must not carry credentials (KEY:SECRET@): give them as AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in the environment';
  }
  if (!BUCKET.test(bucket) || bucket.includes('..')) {
    return `${quote(bucket)} is not a bucket name: 3-63 lowercase letters, digits, "." or "-", starting and ending with a letter or digit`;
  }
  const prefix = (match[2] ?? '').replace(/\/+$/, '');
  if (prefix === '') return undefined;
  const segments = prefix.split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) {
    return `the prefix ${quote(prefix)} has an empty, "." or ".." segment`;
  }
  if (/[\u0000-\u001f\u007f\\]/.test(prefix)) {
    return `the prefix ${quote(prefix)} has a control character or a backslash`;
  }
  return undefined;
}

/** Parses a destination; throws `TypeError` naming the problem (callers check with `s3UrlProblem` first). */
export function parseS3Url(value: string): S3Destination {
  const problem = s3UrlProblem(value);
  if (problem) throw new TypeError(problem);
  const rest = value.slice('s3://'.length);
  const slash = rest.indexOf('/');
  const bucket = slash === -1 ? rest : rest.slice(0, slash);
  const prefix = slash === -1 ? '' : rest.slice(slash + 1).replace(/\/+$/, '');
  return { bucket, prefix, url: `s3://${bucket}${prefix ? `/${prefix}` : ''}` };
}

/** The object key of a file relative to the output folder (POSIX separators). */
export function objectKey(destination: S3Destination, file: string): string {
  return destination.prefix ? `${destination.prefix}/${file}` : file;
}
