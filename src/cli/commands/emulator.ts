/**
 * `ibatch emulator`: serves the emulator on loopback until SIGINT/SIGTERM.
 * With --json, prints exactly one JSON line (the only place the demo keys
 * are printed, on purpose: they are the emulator's own throwaway keys).
 */
import { type Command, Option } from 'commander';
import type { ImageFormat } from '../../emulator/index.js';
import { UsageError } from '../../shared/index.js';
import type { CliIo, CommandModule } from '../command.js';
import { withExamples } from '../help.js';
import { integerAtLeast, positiveNumber } from '../options.js';
import { waitForSignal } from '../wait-for-signal.js';

interface EmulatorFlags {
  port: number;
  uploadPort: number;
  timeScale: number;
  seed?: number;
  json?: boolean;
  faults?: string;
  imageFormat: ImageFormat;
}

const IMAGE_FORMAT_CHOICES = ['png', 'jpeg', 'webp'] as const satisfies readonly ImageFormat[];

async function run(flags: EmulatorFlags, io: CliIo): Promise<void> {
  // Loaded lazily: the other commands never load the emulator.
  const { parseFaultSpec, startEmulator } = await import('../../emulator/index.js');
  let faults: ReturnType<typeof parseFaultSpec> | undefined;
  try {
    faults = flags.faults ? parseFaultSpec(flags.faults) : undefined;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const signal = waitForSignal();
  const em = await startEmulator({
    port: flags.port,
    uploadPort: flags.uploadPort,
    timeScale: flags.timeScale,
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    ...(faults ? { faults } : {}),
    behaviour: { imageFormat: flags.imageFormat },
  }).catch((error: unknown) => {
    throw portProblem(error, flags) ?? error;
  });
  const facts = {
    baseUrl: em.baseUrl,
    adminUrl: em.adminUrl,
    uploadOrigin: em.uploadOrigin,
    accounts: em.accounts,
  };
  if (flags.json) io.stdout.write(`${JSON.stringify(facts)}\n`);
  else {
    const lines = [
      'ibatch emulator is running (Ctrl-C to stop)',
      `  base URL:      ${em.baseUrl}`,
      `  admin:         ${em.adminUrl}`,
      `  upload origin: ${em.uploadOrigin}`,
      `  time scale:    ${flags.timeScale}${faults ? `, faults: ${flags.faults}` : ''}`,
      ...em.accounts.map((a) => `  account ${a.id}: ${a.credits} credits, key ${a.apiKey}`),
    ];
    io.stdout.write(`${lines.join('\n')}\n`);
  }
  await signal;
  await em.stop();
  io.exitCode = 0;
}

/** A port the user asked for that cannot be listened on is their input, not a crash. */
function portProblem(error: unknown, flags: EmulatorFlags): UsageError | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code !== 'EADDRINUSE' && code !== 'EACCES') return undefined;
  const port = (error as { port?: number }).port;
  const which =
    port === flags.uploadPort && port !== flags.port
      ? `--upload-port ${port}`
      : `--port ${port ?? flags.port}`;
  const why = code === 'EADDRINUSE' ? 'is already in use' : 'needs privileges this user lacks';
  return new UsageError(`${which} ${why} on 127.0.0.1: pick another port, or 0 for a free one`);
}

export const emulatorCommand: CommandModule = {
  register(program: Command, io: CliIo): void {
    withExamples(program.command('emulator'), [
      ['emulator --port 8080', 'serve it at http://127.0.0.1:8080/api/v1'],
      ['emulator --json', 'print the URLs and demo keys as one JSON line'],
      ['emulator --time-scale 10 --faults error-500=0.05', 'faster, with 5% server errors'],
    ])
      .description('serve the service emulator on loopback until stopped (never spends credits)')
      .option('--port <n>', 'API port (0 picks a free port)', integerAtLeast('--port', 0), 0)
      .option(
        '--upload-port <n>',
        'upload origin port (0 picks a free port)',
        integerAtLeast('--upload-port', 0),
        0,
      )
      .option(
        '--time-scale <n>',
        "divide rate-limit windows and latencies by n (1: the service's pace, matching a run's default --limits; scale --limits alike)",
        positiveNumber('--time-scale'),
        1,
      )
      .option('--seed <n>', 'seed of latencies, outcomes and faults', integerAtLeast('--seed', 0))
      .option('--faults <spec>', 'fault rates, e.g. error-500=0.05,reset-before=0.01')
      .addOption(
        new Option('--image-format <format>', 'format of image outputs')
          .choices(IMAGE_FORMAT_CHOICES)
          .default('png'),
      )
      .option('--json', 'print one JSON line with the URLs and accounts')
      .action((flags: EmulatorFlags) => run(flags, io));
  },
};
