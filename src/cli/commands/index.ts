/**
 * Every CLI command, in the order `--help` lists them. A command lives in its
 * own file and is added here with one line: its name and how to load it.
 *
 * Loaded on demand: `ibatch status` imports only `status` (and what it
 * imports), `--version` none; the whole list only for what needs every
 * command (the program's help, an unknown name's suggestion): loading them
 * all would be paid by every start-up.
 */
import type { CommandModule } from '../command.js';

type Loader = () => Promise<CommandModule>;

const LOADERS: readonly (readonly [name: string, load: Loader])[] = [
  ['validate', async () => (await import('./validate.js')).validateCommand],
  ['plan', async () => (await import('./plan.js')).planCommand],
  ['run', async () => (await import('./run.js')).runCommand],
  ['status', async () => (await import('./status.js')).statusCommand],
  ['report', async () => (await import('./report.js')).reportCommand],
  ['costs', async () => (await import('./costs.js')).costsCommand],
  ['review', async () => (await import('./review.js')).reviewCommand],
  ['approve', async () => (await import('./approve-reject.js')).approveCommand],
  ['reject', async () => (await import('./approve-reject.js')).rejectCommand],
  ['export', async () => (await import('./export.js')).exportCommand],
  ['deliver', async () => (await import('./deliver.js')).deliverCommand],
  ['models', async () => (await import('./models.js')).modelsCommand],
  ['account', async () => (await import('./account.js')).accountCommand],
  ['influencers', async () => (await import('./influencers.js')).influencersCommand],
  ['journal', async () => (await import('./journal.js')).journalCommand],
  ['schema', async () => (await import('./schema.js')).schemaCommand],
  ['emulator', async () => (await import('./emulator.js')).emulatorCommand],
];

const VERSION_FLAGS = new Set(['-V', '--version']);

/**
 * The commands `argv` (the arguments after `ibatch`) needs: the one it
 * names, none for `--version`, else all of them, in help order.
 */
export async function commandsFor(argv: readonly string[] = []): Promise<CommandModule[]> {
  const first = argv[0];
  const named = LOADERS.find(([name]) => name === first);
  if (named) return [await named[1]()];
  if (first !== undefined && VERSION_FLAGS.has(first)) return [];
  return Promise.all(LOADERS.map(([, load]) => load()));
}
