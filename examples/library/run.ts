/**
 * Runs a job through the library API instead of the CLI.
 *
 *   node --import tsx examples/library/run.ts [JOB] [--out DIR] [--journal PATH] [--run-id ID]
 *
 * With IBATCH_BASE_URL and IBATCH_API_KEY set it talks to the service;
 * otherwise it starts the emulator in-process (time-scaled, so the demo takes
 * seconds) and runs against its funded demo account. It prints progress on
 * stderr and one JSON summary line on stdout, and exits with the run's exit
 * code (the same codes as `ibatch run`).
 *
 * Inside this repository `influencer-batch` resolves to ./dist (run
 * `npm run build` first); in your project it is the installed package.
 */
import { parseArgs } from 'node:util';
import {
  type Connection,
  connect,
  IbatchError,
  type RunEvent,
  type RunningEmulator,
  startEmulator,
} from 'influencer-batch';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string' },
    journal: { type: 'string' },
    'run-id': { type: 'string' },
  },
});
const jobPath = positionals[0] ?? new URL('../../jobs/quickstart.yaml', import.meta.url).pathname;

// The emulator divides its rate windows by TIME_SCALE; our limits must match.
const TIME_SCALE = 20;
const SCALED_LIMITS = `requests=120/${60 / TIME_SCALE}s,generations=20/${60 / TIME_SCALE}s,trainings=5/${3600 / TIME_SCALE}s,uploads=30/${60 / TIME_SCALE}s`;

let emulator: RunningEmulator | undefined;
let service: Connection;
const { IBATCH_BASE_URL, IBATCH_API_KEY } = process.env;
if (IBATCH_BASE_URL && IBATCH_API_KEY) {
  service = connect({
    baseUrl: IBATCH_BASE_URL,
    apiKey: IBATCH_API_KEY,
    ...(process.env.IBATCH_LIMITS ? { limits: process.env.IBATCH_LIMITS } : {}),
    ...(process.env.IBATCH_REDIS_URL ? { limitsStore: process.env.IBATCH_REDIS_URL } : {}),
  });
} else {
  emulator = await startEmulator({ port: 0, timeScale: TIME_SCALE });
  const account = emulator.accounts[0];
  if (!account) throw new Error('the emulator started without an account');
  console.error(`using the emulator at ${emulator.baseUrl}`);
  service = connect({ baseUrl: emulator.baseUrl, apiKey: account.apiKey, limits: SCALED_LIMITS });
}

// A first SIGINT stops creating; the run ends resumable with exit 130.
const abort = new AbortController();
process.once('SIGINT', () => abort.abort(new Error('interrupted')));

const seen: Record<RunEvent['type'], number> = {
  'run-started': 0,
  progress: 0,
  'item-done': 0,
  retry: 0,
  spend: 0,
  pause: 0,
  warning: 0,
  'run-finished': 0,
};

function onEvent(event: RunEvent): void {
  seen[event.type] += 1;
  switch (event.type) {
    case 'run-started':
      console.error(`run ${event.runId}: ${event.items} items${event.resumed ? ' (resumed)' : ''}`);
      break;
    case 'item-done':
      console.error(`  ${event.state.padEnd(9)} ${event.stepId}/${event.label}`);
      break;
    case 'retry':
      console.error(`  retry ${event.endpoint} #${event.attempt} in ${event.delayMs} ms (${event.reason})`);
      break;
    case 'spend':
      console.error(`  spent ${event.spend.net} credits`);
      break;
    case 'pause':
      console.error(`  rate limited until ${new Date(event.until).toISOString()}`);
      break;
    case 'warning':
      console.error(`  warning: ${event.message}`);
      break;
    case 'progress':
    case 'run-finished':
      break;
    default: {
      const never: never = event;
      throw new Error(`unexpected event ${JSON.stringify(never)}`);
    }
  }
}

try {
  const plan = await service.plan(jobPath);
  console.error(`plan: ${plan.total} credits (budget ${plan.budget ?? 'none'}, balance ${plan.balance})`);
  if (plan.verdict !== 'ok') {
    console.error(`not running: ${plan.verdict}`);
    process.exitCode = 3;
  } else {
    // The run, then the job's `deliver:` and `notify:`, as `ibatch run` does.
    const { result, delivery, notification, exitCode } = await service.run(jobPath, {
      ...(values.out ? { outDir: values.out } : {}),
      ...(values.journal ? { journalPath: values.journal } : {}),
      ...(values['run-id'] ? { runId: values['run-id'] } : {}),
      signal: abort.signal,
      onEvent,
    });
    console.error(result.message);
    if (delivery) {
      console.error(
        'error' in delivery
          ? `delivery failed: ${delivery.error.message}`
          : `delivered ${delivery.outputs} output(s) to ${delivery.destination}`,
      );
    }
    if (notification) {
      const told = notification.receivers.filter((receiver) => receiver.delivered).length;
      console.error(`${notification.event.event} sent to ${told} receiver(s)`);
    }
    console.log(
      JSON.stringify({
        runId: result.runId,
        status: result.status,
        exitCode,
        counts: result.counts,
        spend: result.spend,
        planned: plan.total,
        outputDir: result.outputDir,
        events: seen,
      }),
    );
    process.exitCode = exitCode;
  }
} catch (error) {
  // Typed errors carry a stable code and the CLI's exit code.
  if (!(error instanceof IbatchError)) throw error;
  console.error(`${error.code}: ${error.message}`);
  process.exitCode = error.exitCode;
} finally {
  await service.close();
  await emulator?.stop();
}
