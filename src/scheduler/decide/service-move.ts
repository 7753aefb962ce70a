/**
 * A job's unfinished run on another service. Its idempotency keys are what
 * the service deduplicates: a run started under a new service identity gets
 * new keys, so a resume that silently started over would pay every item in
 * flight again. When the job's unfinished run was on another service (by the
 * canonical base URL, src/shared/service-url.ts), `run` refuses and names
 * both, unless the user says the service moved (`--service-moved`): then the
 * run is resumed there with its keys, and its spend counts on the new service.
 */
import {
  FINISHED_RUN_STATUSES,
  isAdoptedRun,
  type Journal,
  type RunRecord,
  scopeOfRun,
  serviceOfRun,
} from '../../journal/index.js';
import { canonicalServiceUrl, EXIT, IbatchError } from '../../shared/index.js';

/** The job's unfinished run was made on another service, and the user did not say it moved. */
export class ServiceChangedError extends IbatchError {
  constructor(
    readonly run: RunRecord,
    readonly from: string,
    readonly to: string,
    /** Whether the run was made with this same API key (its account fingerprint): a hint no URL gives. */
    readonly sameAccount: boolean | undefined,
  ) {
    const account =
      sameAccount === undefined
        ? ''
        : sameAccount
          ? ' with this same API key'
          : ' with another API key';
    super(
      'service_changed',
      `job "${run.jobName}" has an unfinished run (${run.runId}) on ${from}${account}, but this run is on ${to}: ` +
        'its items in flight are known only there. Run it against that service to finish it, ' +
        'or pass --service-moved if it is the same service at a new address (the run resumes there with the same idempotency keys)',
      EXIT.invalid,
    );
  }
}

/**
 * Runs an in-process emulator (`--emulator`) served: gone with the process
 * that started it, so nothing of them can be resumed anywhere.
 */
export const IN_PROCESS_EMULATOR = 'in-process-emulator';

/** The unfinished run the next `run` of the job takes that was made on another service, if any. */
function runOnAnotherService(
  journal: Pick<Journal, 'listRuns'>,
  jobName: string,
  service: string,
  open?: RunRecord,
): RunRecord | undefined {
  // The run in flight is the job's newest (or the one `--run-id` names); an
  // adopted run records another journal's work and hides no run behind it.
  const candidate = open ?? journal.listRuns(jobName, 50).find((run) => !isAdoptedRun(run));
  if (!candidate || FINISHED_RUN_STATUSES.includes(candidate.status)) return undefined;
  const from = serviceOfRun(candidate);
  if (from === '' || from === canonicalServiceUrl(service)) return undefined;
  const served = (candidate.options as { served?: unknown } | null)?.served;
  return served === IN_PROCESS_EMULATOR ? undefined : candidate;
}

/**
 * Refuses a run on another service unless `moved`; returns the run to resume
 * there when moved. `target` is the service and scope (service + account
 * fingerprint) this run spends on.
 */
export function assertSameService(
  journal: Pick<Journal, 'listRuns'>,
  jobName: string,
  target: { readonly service: string; readonly scope: string },
  options: { readonly moved?: boolean; readonly open?: RunRecord },
): RunRecord | undefined {
  const other = runOnAnotherService(journal, jobName, target.service, options.open);
  if (!other) return undefined;
  if (options.moved) return other;
  throw new ServiceChangedError(
    other,
    serviceOfRun(other),
    canonicalServiceUrl(target.service),
    sameAccount(scopeOfRun(other), target.scope),
  );
}

/** Whether two scopes name one account fingerprint; undefined when a scope records none. */
function sameAccount(a: string, b: string): boolean | undefined {
  const fingerprint = (scope: string) => {
    const at = scope.lastIndexOf('#');
    return at < 0 ? undefined : scope.slice(at + 1);
  };
  const [x, y] = [fingerprint(a), fingerprint(b)];
  return x === undefined || y === undefined ? undefined : x === y;
}
