/**
 * Two faults of what surrounds the runner, armed before a spawn (production
 * chaos, docs/chaos.md):
 * - service state lost: the emulator forgets the generations the journal
 *   holds as submitted, outcome not recorded (what a service restarted
 *   without its state would answer 404 for; the ledger keeps their charges).
 *   The spawn must stop with exit 5 and "not known to this service" instead
 *   of polling for ever; the next spawn says `--forget-lost`, which makes
 *   those items again (their lost charge stays, verify.ts allows it).
 * - Redis down at start: the spawn gets `--limits-store` at a port nothing
 *   listens on; it must go on, on local limits, after its connect timeout.
 */
import type { RunningEmulator } from '../../src/emulator/index.js';
import { submittedGenerationIds } from './journal-rows.js';

export interface SpawnFaults {
  /** Extra `ibatch run` arguments of this spawn. */
  readonly args: readonly string[];
  /** For the kill line. */
  readonly what: string;
}

export interface ServiceFaults {
  /** Arms this spawn's faults. */
  before(spawn: number): Promise<SpawnFaults>;
  /** Whether an exit is this fault's expected stop (exit 5, the not-known message). */
  expected(exit: { code: number | null; tail: string }): boolean;
  /** Spawns stopped by lost state, and ids forgotten. */
  readonly counts: { lostStops: number; forgotten: number; redisDown: number };
}

const NOT_KNOWN = /is not known to this service or account/;

export function serviceFaults(
  emulator: RunningEmulator,
  accountId: string,
  /** The journal's file or postgres:// URL. */
  journal: string,
  deadRedisPort: number,
): ServiceFaults {
  let forgetNext = false;
  let armed = false;
  let losePending = false;
  const counts = { lostStops: 0, forgotten: 0, redisDown: 0 };
  return {
    counts,
    async before(spawn) {
      const args: string[] = [];
      const what: string[] = [];
      if (forgetNext) {
        args.push('--forget-lost');
        what.push('--forget-lost');
        forgetNext = false;
      } else if (spawn % 17 === 3 || losePending) {
        // Pending until the journal holds a generation in flight to lose:
        // a spawn after a kill between items has none.
        const ids = await submittedGenerationIds(journal);
        const { forgotten } = await emulator.admin.forgetGenerations(accountId, ids);
        counts.forgotten += forgotten.length;
        armed ||= forgotten.length > 0;
        losePending = forgotten.length === 0;
        if (!losePending) {
          what.push(`service state lost (${forgotten.length} generation(s) forgotten)`);
        }
      }
      if (spawn % 9 === 4) {
        args.push('--limits-store', `redis://127.0.0.1:${deadRedisPort}`);
        counts.redisDown += 1;
        what.push('Redis down at start');
      }
      return { args, what: what.join(', ') };
    },
    expected(exit) {
      if (!armed || exit.code !== 5 || !NOT_KNOWN.test(exit.tail)) return false;
      counts.lostStops += 1;
      forgetNext = true;
      return true;
    },
  };
}
