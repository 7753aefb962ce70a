/**
 * The job-local influencers a lost journal adopts (adopt-manifest.ts): the
 * manifest's rows name the influencer each output was made with
 * (`influencer`, `influencerId`, `influencerConfig`); one still ready on the
 * account, at the configuration the job file describes now, is reused
 * instead of trained again.
 */
import type { LoadedJob } from '../job/index.js';
import type { InfluencerLookup, Journal } from '../journal/index.js';
import { MANIFEST_JSONL, type ManifestRow } from '../outputs/index.js';
import type { Logger } from '../shared/index.js';
import type { PreparedFiles } from './decide/input-files.js';
import { influencerConfigHash } from './decide/item-identity.js';
import type { InfluencerDirectory } from './influencer-directory.js';

/** A job-local influencer adopted from the manifest: trained before, still ready on the account. */
export interface AdoptedInfluencer extends InfluencerLookup {
  readonly influencerId: string;
}

export interface InfluencerAdoptionInput {
  readonly scope: string;
  readonly files: PreparedFiles;
  /** The account's influencers: an adopted influencer must still be listed ready. */
  readonly influencers: InfluencerDirectory;
  readonly logger: Logger;
}

/**
 * The job-local influencers the manifest's succeeded rows were made with, at
 * the job file's configuration, that the journal does not know and the
 * account still lists ready (the newest row naming one wins). The account is
 * read only when a row names one.
 */
export async function adoptedInfluencers(
  journal: Pick<Journal, 'findInfluencer'> | undefined,
  job: LoadedJob,
  rows: readonly ManifestRow[],
  input: InfluencerAdoptionInput,
): Promise<AdoptedInfluencer[]> {
  const adopted: AdoptedInfluencer[] = [];
  for (const spec of job.influencers.values()) {
    const lookup = {
      scope: input.scope,
      jobName: job.name,
      localId: spec.id,
      configHash: influencerConfigHash(job, input.files, spec),
    };
    if (journal?.findInfluencer(lookup)) continue;
    const influencerId = rows.findLast(
      (row) =>
        row.status === 'succeeded' &&
        row.influencer === spec.id &&
        row.influencerConfig === lookup.configHash,
    )?.influencerId;
    if (influencerId === undefined) continue;
    const listed = await input.influencers.find(influencerId);
    if (listed?.id === influencerId && listed.ready) {
      adopted.push({ ...lookup, influencerId });
    } else {
      input.logger.info(
        { influencer: spec.id, influencerId },
        `influencer ${spec.id} (${influencerId}) in ${MANIFEST_JSONL} is ${listed?.id === influencerId ? `not ready (status ${listed.status})` : 'not on this account'}: not reused`,
      );
    }
  }
  return adopted;
}
