/**
 * Process exit codes of the public interface (docs/library.md, README), and
 * the stop reasons of a run: one for each of four codes, plus `delivery`,
 * which shares exit 4 with `unreachable` (its errors name it themselves).
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

/**
 * Why a run stops early (see scheduler/stop-control.ts for what each does).
 * `delivery`: the run finished but copying its outputs to the store failed
 * (src/deliver); it comes after `unreachable` so exit 4 alone still reads as
 * the service's stop.
 */
export const STOP_REASONS = [
  'credits',
  'unreachable',
  'unauthorized',
  'interrupted',
  'delivery',
] as const;
export type StopReason = (typeof STOP_REASONS)[number];

/** The exit code of a run that stopped for `reason`. */
export const EXIT_FOR_STOP: Readonly<Record<StopReason, ExitCode>> = {
  credits: EXIT.credits,
  unreachable: EXIT.unreachable,
  unauthorized: EXIT.unauthorized,
  interrupted: EXIT.interrupted,
  delivery: EXIT.unreachable,
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
