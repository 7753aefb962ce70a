/**
 * What identifies an item across runs (the desired-state comparison) and the
 * trainings a run needs as journal items.
 *
 * An item's identity hash is its request as the job file describes it, plus
 * the content of what the request only names: the local media files (by
 * sha256) and a job-local influencer's training configuration. Editing a
 * reference image therefore makes the items that use it again. An item with
 * neither hashes as its request alone (what older journals recorded).
 */
import type { JobItem, LoadedInfluencer, LoadedJob } from '../../job/index.js';
import type { NewItem } from '../../journal/index.js';
import { contentHash } from '../../shared/index.js';
import { localPathOf, type PreparedFiles } from './input-files.js';

export const TRAINING_STEP = 'influencers';
export const trainingItemKey = (localId: string) => `train-${localId}`;

/** Journal items for the job's trainings (added with the generation items). */
export function trainingItems(influencers: Iterable<LoadedInfluencer>): NewItem[] {
  return [...influencers].map((inf) => {
    const request = {
      name: inf.name,
      username: inf.username,
      style: inf.style,
      gender: inf.gender,
    };
    return {
      itemKey: trainingItemKey(inf.id),
      stepId: TRAINING_STEP,
      label: inf.name,
      kind: 'training',
      request,
      requestHash: contentHash(request),
      expectedOutputs: 0,
    };
  });
}

/** What identifies one training of an influencer: its settings and its images' content. */
export function influencerConfigHash(
  job: LoadedJob,
  files: PreparedFiles,
  spec: LoadedInfluencer,
): string {
  const images =
    'uploadSet' in spec.images
      ? (job.uploads.get(spec.images.uploadSet)?.files ?? []).map(
          (f) => files.byPath.get(f)?.sha256 ?? f,
        )
      : spec.images.urls;
  const { name, username, style, gender } = spec;
  return contentHash({ name, username, style, gender, images });
}

/**
 * The trainings a run needs as journal items: those of the job-local
 * influencers its items use (a training is made only when an item still to
 * be made needs it). One already trained for this account and configuration
 * is seeded too: the run reuses it without a charge (trainings.ts).
 */
export function trainingsToSeed(
  job: LoadedJob,
  makes: readonly Pick<JobItem, 'influencer'>[],
): NewItem[] {
  const used = new Set(
    makes.flatMap((item) =>
      item.influencer && 'jobLocal' in item.influencer ? [item.influencer.jobLocal] : [],
    ),
  );
  return trainingItems([...job.influencers.values()].filter((spec) => used.has(spec.id)));
}

/**
 * The identity hash of an item that names no local file and no job-local
 * influencer (its request alone); undefined for one that does (it needs
 * the files' hashes: `itemIdentity`).
 */
export function filelessIdentity(job: LoadedJob, item: JobItem): string | undefined {
  if (item.mediaRefs.length > 0 || localInfluencer(job, item)) return undefined;
  return contentHash(item.keyed ? { request: item.request, vars: item.vars } : item.request);
}

const localInfluencer = (job: LoadedJob, item: JobItem): LoadedInfluencer | undefined =>
  item.influencer && 'jobLocal' in item.influencer
    ? job.influencers.get(item.influencer.jobLocal)
    : undefined;

/** The identity hash of a job item (see the module comment). */
export function itemIdentity(job: LoadedJob, files: PreparedFiles, item: JobItem): string {
  const fileless = filelessIdentity(job, item);
  if (fileless !== undefined) return fileless;
  const media = item.mediaRefs.map(
    (ref) => files.byPath.get(localPathOf(job, ref))?.sha256 ?? localPathOf(job, ref),
  );
  const local = localInfluencer(job, item);
  return contentHash({
    request: item.request,
    media,
    influencer: local ? influencerConfigHash(job, files, local) : null,
    ...(item.keyed ? { vars: item.vars } : {}),
  });
}

/**
 * `itemIdentity` of one job file, remembered per item: a run asks for it
 * several times per item (the decision, the resume, the items it drives).
 */
export function identityOf(job: LoadedJob, files: PreparedFiles): (item: JobItem) => string {
  const known = new WeakMap<JobItem, string>();
  return (item) => {
    let hash = known.get(item);
    if (hash === undefined) {
      hash = itemIdentity(job, files, item);
      known.set(item, hash);
    }
    return hash;
  };
}
