/**
 * Every CLI command, in the order `--help` lists them. A command lives in its
 * own file and is added here with one line.
 */
import type { CommandModule } from '../command.js';

export const COMMANDS: readonly CommandModule[] = [];
