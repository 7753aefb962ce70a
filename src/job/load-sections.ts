/**
 * The `uploads:` and `influencers:` sections of a job file, normalised: each
 * upload set's globs expanded to files (checked as uploads), each job-local
 * influencer's images resolved to an upload set or asset URLs (checked as
 * training images). Problems go to `issues` at their key; loading goes on.
 */
import { basename, relative } from 'node:path';
import { LIMITS, TRAINING_IMAGE_TYPES, uploadTypeOfFileName } from '../contract/index.js';
import { expandGlobs } from '../uploads/index.js';
import { uploadableProblem } from './files.js';
import type { JobIssue } from './issues.js';
import { globRootProblem, type JobLimits } from './limits.js';
import type { Refused } from './salvage.js';
import type { JobFile } from './schema.js';
import { issueAt, type JobSource } from './source-map.js';
import type { LoadedInfluencer, UploadSet } from './types.js';

export function loadUploads(
  spec: JobFile,
  source: JobSource,
  dir: string,
  limits: JobLimits,
  issues: JobIssue[],
): Map<string, UploadSet> {
  const uploads = new Map<string, UploadSet>();
  for (const [id, set] of Object.entries(spec.uploads ?? {})) {
    const path = ['uploads', id, 'files'];
    // Refused before scanning: `/**/*.png` would walk the whole disk.
    const refused = set.files.flatMap((glob, index) => {
      const problem = globRootProblem(glob, limits);
      return problem ? [issueAt(source, [...path, index], problem)] : [];
    });
    if (refused.length > 0) {
      issues.push(...refused);
      uploads.set(id, { id, globs: set.files, files: [], refused: true });
      continue;
    }
    const { files } = expandGlobs(dir, set.files);
    if (files.length === 0)
      issues.push(
        issueAt(
          source,
          path,
          `no file matches ${set.files.join(', ')} (relative to ${basename(dir) || dir}/)`,
        ),
      );
    for (const f of files) {
      const problem = uploadableProblem(f);
      if (problem) issues.push(issueAt(source, path, `${relative(dir, f)} ${problem}`));
    }
    uploads.set(id, { id, globs: set.files, files });
  }
  return uploads;
}

export function loadInfluencers(
  spec: JobFile,
  source: JobSource,
  uploads: ReadonlyMap<string, UploadSet>,
  issues: JobIssue[],
  refused: Refused,
): Map<string, LoadedInfluencer> {
  const influencers = new Map<string, LoadedInfluencer>();
  for (const [id, inf] of Object.entries(spec.influencers ?? {})) {
    const path = ['influencers', id, 'images'];
    let images: LoadedInfluencer['images'];
    if (typeof inf.images === 'string') {
      images = { uploadSet: inf.images };
      const set = uploads.get(inf.images);
      if (!set && !refused.rootKeys.has('uploads')) {
        const known = [...uploads.keys()];
        issues.push(
          issueAt(
            source,
            path,
            `no upload set \`${inf.images}\`${known.length ? ` (known: ${known.join(', ')})` : ' (add it under `uploads`)'}`,
          ),
        );
      } else if (set) {
        if (set.files.length > LIMITS.trainingImagesMax) {
          issues.push(
            issueAt(
              source,
              path,
              `upload set \`${inf.images}\` has ${set.files.length} files; training takes 1 to ${LIMITS.trainingImagesMax} images`,
            ),
          );
        }
        for (const f of set.files) {
          const mime = uploadTypeOfFileName(f)?.mime;
          if (mime && !TRAINING_IMAGE_TYPES.some((t) => t.mime === mime)) {
            issues.push(
              issueAt(
                source,
                path,
                `${basename(f)} is ${mime}; training takes JPEG, PNG or WebP images only`,
              ),
            );
          }
        }
      }
    } else {
      images = { urls: inf.images };
    }
    influencers.set(id, {
      id,
      name: inf.name,
      ...(inf.username !== undefined ? { username: inf.username } : {}),
      style: inf.style,
      gender: inf.gender,
      images,
      consentAcknowledged: true,
    });
  }
  return influencers;
}

/** Unique ids, known `from:` sources, no cycles; sources ordered before dependants. */
