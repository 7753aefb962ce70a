/**
 * `validate`'s half of the output guard: a job whose outputs can land on the
 * journal, the model cache, the job file or its inputs is refused before
 * anything is spent. Precise on purpose: an output folder that merely
 * contains inputs is fine; what is refused is the journal's own folder, an
 * output folder that is (or is inside) a protected path, and a file name
 * template that can only produce a protected name. Names that depend on
 * item values are checked by the writer at write time (outputs/protected-paths.ts).
 */
import { dirname, join, relative } from 'node:path';
import { MEDIA_TYPES } from '../contract/index.js';
import { journalFiles } from '../journal/index.js';
import {
  fixedFolderOf,
  outputFolderBlocker,
  outputTreeShape,
  protectedPathHit,
  renderOutputPath,
  templatePlaceholders,
} from '../outputs/index.js';
import { canonicalPath } from '../shared/index.js';
import type { JobIssue } from './issues.js';
import { jobInputPaths } from './local-files.js';
import { issueAt } from './source-map.js';
import type { LoadedJob } from './types.js';

const MEDIA_EXTS = [...new Set(Object.values(MEDIA_TYPES).map((type) => type.ext))];

/**
 * Issues at `output:` / `generations[i].filename` for outputs that could
 * overwrite a protected path. `outputDir` is `output:` or the run's `--out`.
 */
export function outputGuardIssues(
  job: LoadedJob,
  {
    journalPath,
    outputDir,
    writes = true,
  }: { journalPath: string; outputDir: string; writes?: boolean },
): JobIssue[] {
  const journal = journalFiles(journalPath);
  const guarded = [...journal, ...jobInputPaths(job)];
  const show = (p: string) => relative(job.dir, p) || p;
  const journalDir = dirname(journal[0] ?? journalPath);
  const folderHit =
    canonicalPath(outputDir) === journalDir ? journalDir : protectedPathHit(outputDir, guarded);
  if (folderHit !== undefined) {
    return [
      issueAt(
        job.source,
        ['output'],
        `output folder ${show(outputDir)} is or is inside ${show(folderHit)}, which holds the journal or an input; outputs there could overwrite it`,
      ),
    ];
  }
  const issues = writes ? folderShapeIssues(job, outputDir, show) : [];
  for (const step of job.steps) {
    const hit = fixedNameHit(outputDir, step.filename, guarded);
    if (hit === undefined) continue;
    issues.push(
      issueAt(
        job.source,
        ['generations', step.index, 'filename'],
        `file name "${step.filename}" would write ${show(hit)}, which is the journal, the job file or one of its inputs`,
      ),
    );
  }
  return issues;
}

/**
 * The protected path a template that can only produce one name (no
 * placeholder but `{ext}`) would write, or undefined. Malformed templates are
 * reported elsewhere.
 */
function fixedNameHit(
  outputDir: string,
  template: string,
  guarded: readonly string[],
): string | undefined {
  const names = templatePlaceholders(template);
  if (!names || names.some((name) => name !== 'ext')) return undefined;
  for (const ext of names.length > 0 ? MEDIA_EXTS : ['']) {
    const hit = protectedPathHit(join(outputDir, renderOutputPath(template, { ext })), guarded);
    if (hit !== undefined) return hit;
  }
  return undefined;
}

/**
 * The output folder cannot be made (a part of its path is a file), holds
 * links leading out of it, has a file where a step's folder goes, or a
 * folder the run writes into does not take files: every download would be
 * refused after it was paid for. The folder itself may be a link.
 */
function folderShapeIssues(
  job: LoadedJob,
  outputDir: string,
  show: (p: string) => string,
): JobIssue[] {
  const blocker = outputFolderBlocker(outputDir);
  if (blocker !== undefined) {
    return [
      issueAt(
        job.source,
        ['output'],
        `output folder ${show(outputDir)} cannot be made: ${blocker}`,
      ),
    ];
  }
  const stepFolders = job.steps.map((step) => fixedFolderOf(step.filename, step.id));
  const issues: JobIssue[] = [];
  job.steps.forEach((step, i) => {
    const folder = stepFolders[i];
    const stepBlocker = folder ? outputFolderBlocker(join(outputDir, folder)) : undefined;
    if (stepBlocker === undefined) return;
    issues.push(
      issueAt(
        job.source,
        ['generations', step.index, 'filename'],
        `step ${step.id} writes its files in ${show(join(outputDir, folder ?? ''))}, but ${stepBlocker}: they would be paid for and then refused; move that file away`,
      ),
    );
  });
  const shape = outputTreeShape(outputDir, stepFolders);
  for (const { link, target } of shape.leaving) {
    issues.push(
      issueAt(
        job.source,
        ['output'],
        `${show(join(outputDir, link))} is a link ${target ? `to ${target}, outside` : 'leading nowhere, in'} the output folder ${show(outputDir)}: outputs are written only inside it, so they would be paid for and then refused; remove the link, or make the output folder itself the link`,
      ),
    );
  }
  for (const { folder, code } of shape.unwritable) {
    issues.push(
      issueAt(
        job.source,
        ['output'],
        `${show(join(outputDir, folder))} does not take files (${code}): outputs would be paid for and then refused; make it writable for this user, or choose another output folder`,
      ),
    );
  }
  return issues;
}
