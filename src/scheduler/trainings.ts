/**
 * Influencers for generation items: job-local ones are trained (once per
 * account and configuration, reused by later runs of the job), existing ones
 * are looked up by id or username and must be ready.
 *
 * A training is a journal item (`influencers.<id>`) with attempts like any
 * generation, so its idempotency key is committed before the create and a
 * run killed during training resumes polling instead of paying again.
 * Trainings are not retried after a failure: they are slow and the service
 * refunds them; the dependent items are skipped with the reason.
 */
import type { TrainingJob, TrainingJobRequest } from '../contract/index.js';
import { trainingOutcome } from '../contract/index.js';
import type { InfluencerRef, LoadedInfluencer } from '../job/index.js';
import { ATTEMPT_STATE, type InfluencerLookup, ITEM_STATE } from '../journal/index.js';
import { trainingPrice } from '../plan/index.js';
import type { AssetResolver } from './assets.js';
import { classifyError } from './classify.js';
import type { RunContext } from './context.js';
import type { PreparedFiles } from './decide/input-files.js';
import { influencerConfigHash, trainingItemKey } from './decide/item-identity.js';
import { InfluencerDirectory } from './influencer-directory.js';
import { DependencyFailedError } from './item-graph.js';
import { type CreateAnswer, type PaidCreate, runJournaledAttempt } from './journaled-attempt.js';
import { NotKnownToServiceError } from './not-known.js';
import { RunStoppedError } from './stop-control.js';
import { pollTraining, TrainingDeadlineError } from './training-poll.js';

export class InfluencerResolver {
  readonly #trainings = new Map<string, Promise<string>>();
  /** Job-local influencers whose training (or reuse) has an outcome. */
  readonly #settled = new Set<string>();

  constructor(
    private readonly ctx: RunContext,
    private readonly assets: AssetResolver,
    private readonly files: PreparedFiles,
    /** The account's influencers (the preflight's list when it read one). */
    private readonly directory = new InfluencerDirectory(ctx.client, ctx.stop.hardStop.signal),
  ) {}

  /** Trainings started (or resumed) here and not ended yet (the run's wait reports). */
  get training(): number {
    return this.#trainings.size - this.#settled.size;
  }

  /**
   * The influencerId to send for `ref`. A job-local influencer not trained
   * yet for this account and configuration is TRAINED here (a paid create,
   * once per resolver however many items wait for it); an existing one is
   * looked up. Rejects with DependencyFailedError.
   */
  resolveOrTrain(ref: InfluencerRef): Promise<string> {
    if ('jobLocal' in ref) {
      let pending = this.#trainings.get(ref.jobLocal);
      if (!pending) {
        pending = this.#train(ref.jobLocal);
        const settled = () => this.#settled.add(ref.jobLocal);
        pending.then(settled, settled);
        this.#trainings.set(ref.jobLocal, pending);
      }
      return pending;
    }
    return this.#lookup('id' in ref ? ref.id : ref.username);
  }

  /**
   * What an item using `ref` must wait for before it can be sent: the training
   * of a job-local influencer that has no outcome yet (started here if it was
   * not); undefined when nothing is left to wait for.
   */
  pendingTraining(ref: InfluencerRef): Promise<string> | undefined {
    if (!('jobLocal' in ref) || this.#settled.has(ref.jobLocal)) return undefined;
    return this.resolveOrTrain(ref);
  }

  async #lookup(idOrUsername: string): Promise<string> {
    const found = await this.directory.find(idOrUsername);
    if (!found)
      throw new DependencyFailedError(`influencer ${idOrUsername} is not on this account`);
    if (!found.ready) {
      throw new DependencyFailedError(
        `influencer ${idOrUsername} is not ready (status ${found.status})`,
      );
    }
    return found.id;
  }

  async #train(localId: string): Promise<string> {
    const { ctx } = this;
    const spec = ctx.job.influencers.get(localId);
    if (!spec) throw new DependencyFailedError(`influencer ${localId} is not defined in the job`);
    const itemKey = trainingItemKey(localId);
    const lookup = {
      scope: ctx.scope,
      jobName: ctx.job.name,
      localId,
      configHash: this.#configHash(spec),
    };
    const known = ctx.journal.findInfluencer(lookup);
    if (known?.status === 'succeeded' && known.influencerId) {
      this.#markReused(itemKey, known.influencerId);
      return known.influencerId;
    }
    let training: TrainingJob | undefined;
    if (known?.trainingId && known.status !== 'failed' && known.status !== 'intent') {
      training = await this.#poll(known.trainingId, localId, itemKey, lookup);
    } else {
      training = await this.#create(localId, spec, itemKey, lookup);
      if (!training) throw new DependencyFailedError(`training of ${localId} was not started`);
      if (!training.terminal)
        training = await this.#poll(training.trainingId, localId, itemKey, lookup);
    }
    return this.#finish(localId, itemKey, lookup, training);
  }

  #configHash(spec: LoadedInfluencer): string {
    return influencerConfigHash(this.ctx.job, this.files, spec);
  }

  #markReused(itemKey: string, influencerId: string): void {
    const item = this.ctx.journal.getItem(this.ctx.runId, itemKey);
    if (item && item.state !== ITEM_STATE.succeeded) {
      this.ctx.journal.setItemState(this.ctx.runId, itemKey, {
        state: ITEM_STATE.succeeded,
        error: null,
      });
      this.ctx.record('training.reused', `reused trained influencer ${influencerId}`, itemKey);
    }
  }

  /**
   * Starts the training through the journaled spend protocol (a new attempt,
   * or the open intent re-sent with its key and body); `undefined` when
   * nothing was sent because the run is stopping.
   */
  async #create(
    localId: string,
    spec: LoadedInfluencer,
    itemKey: string,
    lookup: InfluencerLookup,
  ): Promise<TrainingJob | undefined> {
    const { ctx } = this;
    const { journal, runId } = ctx;
    const open = journal.getOpenAttempt(runId, itemKey);
    if (!open && !ctx.stop.mayCreate) return undefined;
    // An estimate until the account's first training charge is known: a
    // charge above it replaces the reservation as it is (docs/run.md).
    const price = trainingPrice(journal.lastTrainingCharge(ctx.scope), {
      job: ctx.job.trainingEstimate,
      environment: ctx.trainingEstimate,
    }).credits;
    const start = open ? { open } : { body: await this.#body(spec), quotedCost: price };
    try {
      const submitted = await runJournaledAttempt(
        ctx,
        this.#trainingCreate(itemKey, lookup),
        start,
      );
      if (!submitted) return undefined;
      const created = submitted.answer.job;
      journal.saveInfluencer({
        ...lookup,
        runId,
        trainingId: created.trainingId,
        influencerId: created.influencerId,
        status: created.status.toLowerCase(),
        creditsCost: created.creditsCost,
      });
      ctx.record('training.created', `training ${localId} started`, itemKey, {
        trainingId: created.trainingId,
        creditsCost: created.creditsCost,
      });
      return created;
    } catch (error) {
      const verdict = classifyError(error, ctx.stop.hardStop.signal);
      if (verdict.kind === 'stop') {
        ctx.stop.stop(verdict.reason, verdict.message);
        throw new DependencyFailedError(`training ${localId} not started: ${verdict.message}`);
      }
      journal.saveInfluencer({ ...lookup, status: 'failed', error: verdict.message });
      throw new DependencyFailedError(`training ${localId} was refused: ${verdict.message}`);
    }
  }

  #trainingCreate(
    itemKey: string,
    lookup: InfluencerLookup,
  ): PaidCreate<TrainingJobRequest, CreateAnswer & { readonly job: TrainingJob }> {
    const { ctx } = this;
    return {
      kind: 'training',
      itemKey,
      training: lookup,
      send: async (body, key, signal) => {
        const job = await ctx.client.createTraining(body, { idempotencyKey: key, signal });
        return {
          chargedCost: job.creditsCost,
          httpStatus: job.httpStatus,
          remote: { trainingId: job.trainingId, influencerId: job.influencerId },
          job,
        };
      },
    };
  }

  /** The create body: the images as asset URLs (uploaded first when local). */
  async #body(spec: LoadedInfluencer): Promise<TrainingJobRequest> {
    const assetUrls =
      'uploadSet' in spec.images
        ? await Promise.all(
            (this.ctx.job.uploads.get(spec.images.uploadSet)?.files ?? []).map((f) =>
              this.assets.urlFor(f),
            ),
          )
        : [...spec.images.urls];
    return {
      name: spec.name,
      ...(spec.username ? { username: spec.username } : {}),
      style: spec.style,
      gender: spec.gender,
      assetUrls,
      consentAcknowledged: true,
    };
  }

  /** Polls the training to its end; a lost one stops the run, or with `--forget-lost` fails it. */
  async #poll(trainingId: string, localId: string, itemKey: string, lookup: InfluencerLookup) {
    const { ctx } = this;
    const open = ctx.journal.getOpenAttempt(ctx.runId, itemKey);
    try {
      return await pollTraining(ctx, trainingId, open?.submittedAt ?? Date.now());
    } catch (error) {
      if (error instanceof TrainingDeadlineError) {
        ctx.stop.stop('unreachable', error.message);
        throw new RunStoppedError(error.message);
      }
      if (!(error instanceof NotKnownToServiceError)) throw error;
      if (!ctx.forgetLost) {
        ctx.stop.stop('unauthorized', error.message, undefined, NotKnownToServiceError.NEXT_STEP);
        throw new RunStoppedError(error.message);
      }
      const message = `lost by the service (--forget-lost): ${error.message}`;
      if (open) {
        ctx.journal.recordAttemptOutcome({
          runId: ctx.runId,
          itemKey,
          attemptNo: open.attemptNo,
          state: ATTEMPT_STATE.failed,
          itemState: ITEM_STATE.failed,
          error: message,
        });
      }
      ctx.journal.saveInfluencer({ ...lookup, status: 'failed', error: message });
      ctx.record('training.failed', `training ${localId}: ${message}`, itemKey);
      throw new DependencyFailedError(`training of influencer ${localId} ${message}`);
    }
  }

  #finish(
    localId: string,
    itemKey: string,
    lookup: InfluencerLookup,
    training: TrainingJob,
  ): string {
    const { journal, runId } = this.ctx;
    const open = journal.getOpenAttempt(runId, itemKey);
    const succeeded = trainingOutcome(training) === 'succeeded';
    if (open) {
      journal.recordAttemptOutcome({
        runId,
        itemKey,
        attemptNo: open.attemptNo,
        state: succeeded ? ATTEMPT_STATE.succeeded : ATTEMPT_STATE.failed,
        itemState: succeeded ? ITEM_STATE.succeeded : ITEM_STATE.failed,
        refunded: training.refunded,
        error: succeeded ? null : `training failed${training.refunded ? ' (refunded)' : ''}`,
      });
    } else if (succeeded) {
      journal.setItemState(runId, itemKey, { state: ITEM_STATE.succeeded, error: null });
    }
    journal.saveInfluencer({
      ...lookup,
      trainingId: training.trainingId,
      influencerId: training.influencerId,
      loraUrl: training.loraUrl,
      status: succeeded ? 'succeeded' : 'failed',
      refunded: training.refunded,
      creditsCost: training.creditsCost,
      ...(succeeded ? {} : { error: 'training failed' }),
    });
    if (!succeeded) {
      const refund = training.refunded ? `, ${training.creditsCost} credits refunded` : '';
      this.ctx.record('training.failed', `training ${localId} failed${refund}`, itemKey);
      throw new DependencyFailedError(`training of influencer ${localId} failed${refund}`);
    }
    this.ctx.record('training.succeeded', `influencer ${localId} is ready`, itemKey, {
      influencerId: training.influencerId,
      loraUrl: training.loraUrl,
    });
    return training.influencerId;
  }
}
