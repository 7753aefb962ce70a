/** Our `--limits` for an emulator running at `timeScale` (its windows divided by it). */
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';

/** The service's limits with every window divided by `timeScale`, as a `--limits` spec. */
export function scaledLimits(timeScale: number): string {
  return Object.entries(SERVICE_RATE_LIMITS)
    .map(
      ([bucket, w]) => `${bucket}=${w.count}/${Math.max(1, Math.round(w.windowMs / timeScale))}ms`,
    )
    .join(',');
}
