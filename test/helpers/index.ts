/** The test kit: import from here, not from the files behind it. */
export { defer } from './cleanup.js';
export {
  type CliResult,
  capture,
  type Exit,
  expectNoStack,
  firstStdoutLine,
  type JsonLogLine,
  jsonLogs,
  planCli,
  processWarningIn,
  runCliCaptured,
  type SpawnCliOptions,
  type SpawnedCli,
  said,
  spawnCli,
  whileStopped,
} from './cli.js';
export { type ParsedCsv, parseCsv } from './csv.js';
export { emulatorEnv, testEmulator } from './emulator.js';
export { exifTags, hasExiftool } from './exiftool.js';
export { scaledLimits } from './limits.js';
export { expectManifestFilesIn, manifestRows, manifestRowsOf } from './manifest.js';
export { BIN, DIST, REPO, repoPath } from './paths.js';
export { freePort } from './ports.js';
export { type CommandResult, cleanEnv, type RunCommandOptions, runCommand } from './process.js';
export { type Answer, type Receiver, testReceiver } from './receiver.js';
export { entriesHeldBy } from './signals.js';
export { tempCopy, tempDir } from './temp.js';
export { type Truthy, type UntilOptions, until } from './until.js';
