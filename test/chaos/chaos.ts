/**
 * The kill-and-resume loop shared by `npm run chaos` (test/chaos/driver.ts),
 * its short version in `npm test` and the crash test: run the campaign as a
 * child process, SIGKILL it (seeded random moments, and optionally at each
 * crash point of src/scheduler/crash-points.ts), resume, repeat until it
 * finishes, then hold the journal, the ledger and the output folder against
 * each other (verify.ts).
 */

import { mkdir, mkdtemp, rm, symlink } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { LONGEST_RETRY_AFTER_MS } from '../../src/contract/index.js';
import type { FaultConfig, RunningEmulator } from '../../src/emulator/index.js';
import { mulberry32 } from '../../src/shared/prng.js';
// The pure parts of the kit only: `npm run chaos` runs this outside vitest.
import { scaledLimits } from '../helpers/limits.js';
import { freePort } from '../helpers/ports.js';
import { creationFloorMs, startCampaignEmulator, writeCampaign } from './campaign.js';
import { type KillPlan, type RunnerTarget, runOnce } from './runner.js';
import { type ServiceFaults, serviceFaults } from './service-faults.js';
import { type Verdict, verifyCampaign } from './verify.js';

export interface ChaosOptions {
  /** SIGKILLs before the run may finish. */
  readonly kills: number;
  /** Generations in the campaign. */
  readonly items: number;
  readonly seed: number;
  readonly timeScale: number;
  /** Inject the chaos fault mix (429 bursts, 5xx, resets, slow, failed+refunded, blocked). */
  readonly faults: boolean;
  /** Upload images and train an influencer first. */
  readonly training: boolean;
  /** Crash-point specs (IBATCH_CRASH_AT) to use, one per kill, before random kills. */
  readonly crashPoints?: readonly string[];
  /** Every nth random kill is a probabilistic crash point instead of a timer (0: never). */
  readonly crashEvery?: number;
  /** Give up (a violation) after this long. */
  readonly maxSeconds: number;
  /** One line per kill / resume. */
  readonly log?: (line: string) => void;
  /** Keep the temp folder (printed) for a post-mortem. */
  readonly keep?: boolean;
  /**
   * After the campaign finished: add this many drafts to the job file and run
   * it again, killed `kills` times (a nightly re-run over a grown CSV). The
   * re-run must create only the new items.
   */
  readonly regrow?: { readonly generations: number; readonly kills: number };
  /**
   * Production faults besides the fault mix: the journal reached
   * through other path spellings, and now and then a 429 whose Retry-After is
   * absurd (the run must stop with its own message, resumable, never loop).
   */
  readonly production?: boolean;
  /**
   * A PostgreSQL journal's URL to run the campaign with, instead of the
   * SQLite file in its folder (a runner with no local journal at all).
   */
  readonly journal?: string;
}

/** The verdict's counts and states, plus what the campaign itself saw. */
export interface ChaosSummary extends Omit<Verdict, 'violations'> {
  readonly kills: number;
  readonly crashPointKills: Readonly<Record<string, number>>;
  readonly spawns: number;
  readonly rateLimited: number;
  /** Requests the emulator saw arrive inside an announced Retry-After. */
  readonly early: number;
  /** Of those, the ones arriving more than IN_FLIGHT_MS after the 429: sent knowing of it. */
  readonly earlyAfter429: number;
  readonly finalExit: number | null;
  /** Production: spawns stopped (exit 5) by the service's lost state, and Redis-down spawns. */
  readonly service: ServiceFaults['counts'];
  readonly seconds: number;
  readonly violations: readonly string[];
  readonly dir: string;
}

/** The fault mix of `npm run chaos`: every kind a long real run meets, seeded. */
export const CHAOS_FAULTS: FaultConfig = {
  rates: {
    'rate-limit-burst': 0.01,
    'error-500': 0.01,
    'error-502': 0.005,
    'error-503': 0.005,
    'reset-before': 0.005,
    'reset-after-commit': 0.01,
    slow: 0.01,
    'generation-fail': 0.1,
    'safety-block': 0.02,
  },
  slowMs: 250,
};

/**
 * A request arriving this soon after a 429 may have been sent before the
 * client saw it. The client pauses from the moment it reads the 429 (later
 * than the server's announcement), so only a request that passed the gate
 * before that can arrive early; on this loaded 2-core machine that lag was
 * seen up to ~350 ms.
 */
export const IN_FLIGHT_MS = 500;

export async function runChaos(options: ChaosOptions): Promise<ChaosSummary> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ibatch-chaos-'));
  const emulator = await startCampaignEmulator({
    timeScale: options.timeScale,
    seed: options.seed,
    ...(options.faults ? { faults: CHAOS_FAULTS } : {}),
  });
  try {
    const files = await writeCampaign(dir, {
      generations: options.items,
      training: options.training,
    });
    const account = emulator.accounts[0];
    if (!account) throw new Error('the emulator has no account');
    const journalPath = options.journal ?? files.journalPath;
    const target: RunnerTarget = {
      jobPath: files.jobPath,
      journalPath,
      baseUrl: emulator.baseUrl,
      apiKey: account.apiKey,
      limits: scaledLimits(options.timeScale),
      // Other spellings of a path are a file journal's concern; a URL is one address.
      ...(options.production && !options.journal
        ? { journalSpellings: await journalSpellings(dir) }
        : {}),
    };
    const absurdWaits = options.production ? absurdRetryAfter(emulator, options) : undefined;
    const service = options.production
      ? serviceFaults(emulator, account.id, journalPath, await freePort())
      : undefined;
    const loop = await killLoop(options, target, started, log, absurdWaits, service);
    let final = files;
    if (options.regrow && loop.violations.length === 0) {
      final = await writeCampaign(dir, {
        generations: options.items + options.regrow.generations,
        training: options.training,
        username: files.username,
      });
      log(`re-run with ${final.generationItems - files.generationItems} more item(s)`);
      const again = await killLoop(
        {
          ...options,
          items: options.regrow.generations,
          kills: options.regrow.kills,
          crashPoints: [],
        },
        target,
        started,
        log,
        absurdWaits,
        service,
      );
      loop.kills += again.kills;
      loop.spawns += again.spawns;
      loop.finalExit = again.finalExit;
      loop.violations.push(...again.violations);
      for (const [spec, n] of Object.entries(again.crashPointKills))
        loop.crashPointKills[spec] = (loop.crashPointKills[spec] ?? 0) + n;
    }
    const verdict = await verifyCampaign({
      journalPath,
      outDir: files.outDir,
      ledger: await emulator.admin.ledger(account.id),
      expectedItems: final.generationItems + final.trainings,
      expectedRuns: options.regrow ? 2 : 1,
    });
    const all = await emulator.admin.stats();
    const stats = all.accounts.find((a) => a.id === account.id);
    const violations = [...loop.violations, ...verdict.violations];
    const the429s = all.faults
      .filter((f) => f.accountId === account.id && f.fault.startsWith('rate-limit'))
      .map((f) => Date.parse(f.at));
    const earlyRequests = stats?.earlyRequests ?? [];
    const early = earlyRequests.length;
    // The emulator counts every request that arrives after a 429 was sent
    // and before its Retry-After elapsed, including requests that were
    // already on the wire when the 429 left. Only those arriving later than
    // IN_FLIGHT_MS after the 429 can have been sent knowing of it.
    const late = earlyRequests.filter((e) => {
      const at = Date.parse(e.at);
      // A wait beyond the client's ceiling is refused by design: the run
      // stops (exit 4) and the next one asks the service again.
      if (Date.parse(e.notBefore) - at > LONGEST_RETRY_AFTER_MS) return false;
      const announcedAt = Math.max(-Infinity, ...the429s.filter((t) => t <= at));
      return at - announcedAt > IN_FLIGHT_MS;
    });
    for (const e of late) {
      violations.push(
        `${e.endpoint} request at ${e.at}, before the announced Retry-After elapsed (${e.notBefore})`,
      );
    }
    return {
      kills: loop.kills,
      crashPointKills: loop.crashPointKills,
      spawns: loop.spawns,
      items: verdict.items,
      chargedOnce: verdict.chargedOnce,
      double: verdict.double,
      lost: verdict.lost,
      outputs: verdict.outputs,
      refunds: verdict.refunds,
      rateLimited: (stats?.counters.rateLimited ?? 0) + the429s.length,
      early,
      earlyAfter429: late.length,
      finalExit: loop.finalExit,
      service: service?.counts ?? { lostStops: 0, forgotten: 0, redisDown: 0 },
      seconds: Math.round((Date.now() - started) / 100) / 10,
      states: verdict.states,
      violations,
      dir,
    };
  } finally {
    await emulator.stop();
    if (!options.keep) await rm(dir, { recursive: true, force: true });
  }
}

interface LoopResult {
  kills: number;
  spawns: number;
  crashPointKills: Record<string, number>;
  finalExit: number | null;
  violations: string[];
}

async function killLoop(
  options: ChaosOptions,
  target: RunnerTarget,
  started: number,
  log: (line: string) => void,
  absurdWaits?: (spawn: number) => Promise<boolean>,
  service?: ServiceFaults,
): Promise<LoopResult> {
  const random = mulberry32(options.seed ^ 0x5eed);
  // Spread the kills over less than the creation floor, so every planned kill
  // still finds work to interrupt (the average kill lands at half the delay).
  const floor = creationFloorMs(options.items, options.timeScale);
  const maxDelay = Math.min(2500, Math.max(150, (0.8 * floor) / Math.max(1, options.kills)));
  const crashQueue = [...(options.crashPoints ?? [])];
  const result: LoopResult = {
    kills: 0,
    spawns: 0,
    crashPointKills: {},
    finalExit: null,
    violations: [],
  };
  let randomKills = 0;
  let otherExits = 0;
  const deadline = started + options.maxSeconds * 1000;
  for (;;) {
    if (Date.now() > deadline) {
      result.violations.push(
        `did not finish within ${options.maxSeconds}s (${result.kills} kills)`,
      );
      return result;
    }
    let plan: KillPlan = {};
    let what = 'resume';
    if (result.kills < options.kills) {
      const crashAt = crashQueue.shift();
      const delay = Math.round(random() * maxDelay);
      if (crashAt) {
        // The timer is a fallback in case the point is not reached this time.
        plan = { crashAt, afterMs: 4 * maxDelay + 1000 };
        what = `crash point ${crashAt}`;
      } else {
        randomKills += 1;
        const fromSpawn = random() < 0.2;
        if (options.crashEvery && randomKills % options.crashEvery === 0) {
          plan = {
            crashAt: '*@0.05',
            crashSeed: options.seed + result.spawns,
            afterMs: delay + maxDelay,
          };
          what = 'random crash point';
        } else {
          plan = { afterMs: fromSpawn ? delay + 300 : delay, fromSpawn };
          what = `timer ${plan.afterMs}ms after ${fromSpawn ? 'spawn' : 'start'}`;
        }
      }
    }
    const spellings = target.journalSpellings ?? [];
    if (spellings.length > 0)
      plan = { ...plan, journal: spellings[result.spawns % spellings.length] };
    const absurd = absurdWaits ? await absurdWaits(result.spawns) : false;
    if (absurd) what += ', absurd Retry-After armed';
    // Production faults: every thirteenth spawn's journal disk fills up after
    // a few pages (IBATCH_JOURNAL_FULL_AFTER, a SQLite file's fault): a stop
    // with its own message.
    const journalFull = absurdWaits !== undefined && !options.journal && result.spawns % 13 === 8;
    if (journalFull) {
      plan = { ...plan, journalFullAfter: 1 + Math.floor(random() * 4) };
      what += `, journal disk full after ${plan.journalFullAfter} page(s)`;
    }
    const around = service ? await service.before(result.spawns) : undefined;
    if (around && around.args.length > 0) plan = { ...plan, args: around.args };
    if (around?.what) what += `, ${around.what}`;
    result.spawns += 1;
    const exit = await runOnce(target, plan, 120_000);
    if (exit.hung) {
      result.violations.push(`runner hung (killed after ${exit.ms} ms): ${exit.tail.slice(-800)}`);
      return result;
    }
    if (exit.signal === 'SIGKILL') {
      result.kills += 1;
      const by = exit.killedByTimer ? 'timer' : `crash point (${plan.crashAt})`;
      if (!exit.killedByTimer && plan.crashAt) {
        result.crashPointKills[plan.crashAt] = (result.crashPointKills[plan.crashAt] ?? 0) + 1;
      }
      log(`kill ${result.kills}: SIGKILL by ${by} after ${exit.ms} ms [planned: ${what}]`);
      continue;
    }
    if (exit.code === 0 || (exit.code === 1 && options.faults)) {
      result.finalExit = exit.code;
      log(`finished: exit ${exit.code} after ${exit.ms} ms`);
      if (result.kills < options.kills) {
        result.violations.push(
          `the run finished after only ${result.kills} of ${options.kills} kills`,
        );
      }
      return result;
    }
    log(`resume: exit ${exit.code ?? exit.signal} after ${exit.ms} ms [${what}]`);
    // The absurd wait's own stop (exit 4, resumable) is the expected outcome.
    if (absurd && exit.code === 4 && /Retry-After/i.test(exit.tail)) continue;
    // So is the full journal disk's (exit 4, or 2 when it fills at start-up).
    if (journalFull && (exit.code === 4 || exit.code === 2) && /journal/i.test(exit.tail)) continue;
    // So is the lost service state's (exit 5, "not known"): the next spawn forgets it.
    if (service?.expected(exit)) continue;
    otherExits += 1;
    if (exit.code === 2 || exit.code === 1 || otherExits > 20) {
      result.finalExit = exit.code;
      result.violations.push(`runner exited ${exit.code}: ${exit.tail.slice(-1500)}`);
      return result;
    }
  }
}

/** The one summary line of `npm run chaos`. */
export function summaryLine(s: ChaosSummary): string {
  return (
    `chaos: kills=${s.kills} items=${s.items} charged-once=${s.chargedOnce} double=${s.double} ` +
    `lost=${s.lost} outputs=${s.outputs} refunds=${s.refunds} 429s=${s.rateLimited} early=${s.earlyAfter429} early-in-flight=${s.early - s.earlyAfter429} ` +
    `state-lost-stops=${s.service.lostStops} forgotten=${s.service.forgotten} redis-down=${s.service.redisDown} ` +
    `spawns=${s.spawns} violations=${s.violations.length} seconds=${s.seconds}`
  );
}

/** The journal as other spellings reach it: through a symlinked folder and through `x/../`. */
async function journalSpellings(dir: string): Promise<string[]> {
  await mkdir(path.join(dir, 'sub'), { recursive: true });
  await symlink(dir, path.join(dir, 'alias'));
  const name = 'journal.db';
  return [path.join(dir, name), path.join(dir, 'alias', name), path.join(dir, 'sub', '..', name)];
}

/** Output URLs a hostile or broken service hands out (the emulator's `outputUrlStyle`). */
const HOSTILE_URLS = ['data', 'ftp', 'cross-origin-redirect', 'html-body', 'not-media'] as const;

/**
 * Before each spawn: every seventh meets one 429 whose Retry-After is 30 days
 * (beyond the client's ceiling): that run must stop at once, resumable, and
 * the next one carry on. Every eleventh gets hostile output URLs while it
 * runs (the items made then fail for good with the reason, their charge kept;
 * a later run makes them again). Returns whether the absurd wait is armed.
 */
function absurdRetryAfter(
  emulator: RunningEmulator,
  options: ChaosOptions,
): (spawn: number) => Promise<boolean> {
  const normal = options.faults ? CHAOS_FAULTS : {};
  return async (spawn) => {
    const arm = spawn % 7 === 3;
    await emulator.admin.setFaults(arm ? { ...normal, retryAfter: String(30 * 86_400) } : normal);
    if (arm) await emulator.admin.scriptFaults([{ fault: 'rate-limit-burst', times: 1 }]);
    const hostile =
      spawn % 11 === 5 ? HOSTILE_URLS[((spawn / 11) % HOSTILE_URLS.length) | 0] : undefined;
    await emulator.admin.setBehaviour({ outputUrlStyle: hostile ?? 'plain' });
    return arm;
  };
}
