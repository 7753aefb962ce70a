/** Process exit codes of the public interface (docs/library.md, README). */
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
