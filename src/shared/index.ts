/** @module shared — small building blocks every other module may use. */

export * from './content-hash.js';
export * from './errors.js';
export * from './exit-codes.js';
export * from './fit-line.js';
export { type LinkedSignal, type LinkOptions, linkSignals } from './linked-signal.js';
export * from './logger.js';
export { thisMachine } from './machine.js';
export { makeFolderSync } from './make-folder.js';
export * from './paths.js';
export * from './prng.js';
export * from './redact.js';
export * from './regexp.js';
export * from './request-gate.js';
export * from './service-url.js';
export * from './sleep.js';
export { isAlive, removeDeadWritersTemps, tempBeside } from './temp-files.js';
export { undici } from './undici.js';
export { clockTime, logIsQuiet, noteLogLine, WAIT_CHECK_MS, WAIT_REPORT_MS } from './waits.js';
