/**
 * One cleanup registry for everything the kit creates (temp dirs, emulators,
 * children): made inside a test, it is undone when that test finishes; made
 * in `beforeAll` or at module level, when the file's tests are done. So a
 * helper never has to know which of the two its caller is.
 */
import { afterAll, onTestFinished } from 'vitest';

type Cleanup = () => unknown;

const fileCleanups: Cleanup[] = [];

afterAll(async () => {
  for (const cleanup of fileCleanups.splice(0).reverse()) await cleanup();
});

/** Runs `cleanup` after the current test, or after the file when called outside a test. */
export function defer(cleanup: Cleanup): void {
  try {
    // Reverse order of registration (vitest's default `sequence.hooks: 'stack'`).
    onTestFinished(async () => {
      await cleanup();
    });
  } catch {
    // Not inside a test (beforeAll, module level): the file owns it.
    fileCleanups.push(cleanup);
  }
}
