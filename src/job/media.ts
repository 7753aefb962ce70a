/**
 * Media references in input fields: a local file (resolved relative to the
 * job file) or an upload set entry (`upload:<set>/<file>`, or `upload:<set>`
 * for a set of exactly one file). The engine uploads them first and replaces
 * each by its asset URL.
 */
import { basename, relative } from 'node:path';
import { uploadTypeOfFileName } from '../contract/index.js';
import { fileExists, resolveFrom, uploadableProblem } from './files.js';
import type { MediaRef, UploadSet } from './types.js';

export const UPLOAD_REF_PREFIX = 'upload:';

export type MediaResolution =
  | { readonly ref: MediaRef }
  | { readonly problem: string }
  /** An upload set whose entry was refused: its mistake is reported already. */
  | { readonly unchecked: true };

export class MediaResolver {
  private readonly cache = new Map<string, { path?: string; problem?: string }>();

  constructor(
    private readonly dir: string,
    private readonly uploads: ReadonlyMap<string, UploadSet>,
  ) {}

  resolve(
    field: string,
    index: number | undefined,
    value: string,
    fieldType: string,
  ): MediaResolution {
    const at = index === undefined ? { field } : { field, index };
    if (value.startsWith(UPLOAD_REF_PREFIX))
      return this.uploadRef(at, value.slice(UPLOAD_REF_PREFIX.length), fieldType);
    const looksLocal =
      /^(\.{1,2}[\\/]|[\\/])/.test(value) || fileExists(resolveFrom(this.dir, value));
    if (!looksLocal) {
      return {
        problem: `${JSON.stringify(value)} is not an http(s) URL, an existing local file or an upload:<set>/<file> reference`,
      };
    }
    const path = resolveFrom(this.dir, value);
    let checked = this.cache.get(path);
    if (!checked) {
      const problem = uploadableProblem(path);
      checked = problem ? { problem: `local file ${value} ${problem}` } : { path };
      this.cache.set(path, checked);
    }
    if (checked.problem) return { problem: checked.problem };
    const family = familyProblem(path, fieldType);
    if (family) return { problem: `local file ${value} ${family}` };
    return { ref: { ...at, path } };
  }

  private uploadRef(
    at: { field: string; index?: number },
    rest: string,
    fieldType: string,
  ): MediaResolution {
    const slash = rest.indexOf('/');
    const setId = slash < 0 ? rest : rest.slice(0, slash);
    const name = slash < 0 ? undefined : rest.slice(slash + 1);
    const set = this.uploads.get(setId);
    if (!set) {
      const known = [...this.uploads.keys()];
      return {
        problem: `no upload set \`${setId}\`${known.length ? ` (known: ${known.join(', ')})` : ''}`,
      };
    }
    if (set.refused) return { unchecked: true };
    let file: string | undefined;
    if (name === undefined) {
      if (set.files.length !== 1) {
        return {
          problem: `upload set \`${setId}\` has ${set.files.length} files: name one as upload:${setId}/<file>`,
        };
      }
      file = set.files[0];
    } else {
      file = set.files.find((f) => basename(f) === name || relative(this.dir, f) === name);
      if (!file) return { problem: `upload set \`${setId}\` has no file ${JSON.stringify(name)}` };
    }
    if (file === undefined) return { problem: `upload set \`${setId}\` is empty` };
    const family = familyProblem(file, fieldType);
    if (family) return { problem: `${basename(file)} ${family}` };
    return { ref: { ...at, path: { uploadSet: setId, file } } };
  }
}

function familyProblem(path: string, fieldType: string): string | undefined {
  const mime = uploadTypeOfFileName(path)?.mime;
  if (mime && !mime.startsWith(`${fieldType}/`))
    return `is ${mime}, but the field takes ${fieldType} files`;
  return undefined;
}
