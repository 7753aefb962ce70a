/**
 * The promise every wait of ibatch keeps: no wait of more than
 * `WAIT_REPORT_MS` passes without a log line saying what it waits for (the
 * run's in-flight work, the rate gate, the journal's lock), so a person or a
 * supervisor reading the log can tell a long wait from a hang. The reporters
 * speak only when the log has been quiet that long: a busy run's own lines
 * already show it is alive.
 */
export const WAIT_REPORT_MS = 10_000;

/** How often a reporter looks while something waits. */
export const WAIT_CHECK_MS = 1_000;

let lastLineAt = Date.now();

/** Called for every line the process logs (createLogger's sink does it). */
export function noteLogLine(): void {
  lastLineAt = Date.now();
}

/**
 * Whether a reporter should speak now: the log has been quiet for the promise
 * minus two checks, so the line lands in time even from a timer a busy
 * machine runs late. A last line "in the future" means the clock was set
 * back since: speak, rather than stay silent until the clock catches up.
 */
export function logIsQuiet(now = Date.now()): boolean {
  const quietFor = now - lastLineAt;
  return quietFor < 0 || quietFor >= WAIT_REPORT_MS - 2 * WAIT_CHECK_MS;
}

/** `HH:MM:SS` (UTC) of an epoch-ms instant, as the logs show times. */
export function clockTime(epochMs: number): string {
  return new Date(epochMs).toISOString().slice(11, 19);
}
