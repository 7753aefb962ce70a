/**
 * Process exit codes of the public interface (docs/library.md, README), and
 * the stop reasons of a run, which map one to one onto four of them.
 */
export const EXIT = {
  ok: 0,
  itemsFailed: 1,
  invalid: 2,
  credits: 3,
  unreachable: 4,
  unauthorized: 5,
  interrupted: 130,
} as const;
export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** Why a run stops early (see scheduler/stop-control.ts for what each does). */
export const STOP_REASONS = ['credits', 'unreachable', 'unauthorized', 'interrupted'] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** The exit code of a run that stopped for `reason`. */
export const EXIT_FOR_STOP: Readonly<Record<StopReason, ExitCode>> = {
  credits: EXIT.credits,
  unreachable: EXIT.unreachable,
  unauthorized: EXIT.unauthorized,
  interrupted: EXIT.interrupted,
};

/**
 * What a failure with this exit code means for a run: the reason to stop
 * everything, or null when only the item it happened to has failed (0, 1, 2:
 * what we sent or asked for was wrong, another item may still succeed).
 */
export function stopReasonForExit(exitCode: ExitCode): StopReason | null {
  for (const reason of STOP_REASONS) if (EXIT_FOR_STOP[reason] === exitCode) return reason;
  return null;
}
