/**
 * Every CLI command, in the order `--help` lists them. A command lives in its
 * own file and is added here with one line.
 */
import type { CommandModule } from '../command.js';
import { accountCommand } from './account.js';
import { approveCommand, rejectCommand } from './approve-reject.js';
import { costsCommand } from './costs.js';
import { deliverCommand } from './deliver.js';
import { emulatorCommand } from './emulator.js';
import { exportCommand } from './export.js';
import { influencersCommand } from './influencers.js';
import { modelsCommand } from './models.js';
import { planCommand } from './plan.js';
import { reportCommand } from './report.js';
import { reviewCommand } from './review.js';
import { runCommand } from './run.js';
import { schemaCommand } from './schema.js';
import { statusCommand } from './status.js';
import { validateCommand } from './validate.js';

export const COMMANDS: readonly CommandModule[] = [
  validateCommand,
  planCommand,
  runCommand,
  statusCommand,
  reportCommand,
  costsCommand,
  reviewCommand,
  approveCommand,
  rejectCommand,
  exportCommand,
  deliverCommand,
  modelsCommand,
  accountCommand,
  influencersCommand,
  schemaCommand,
  emulatorCommand,
];
