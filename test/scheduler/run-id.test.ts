/**
 * The run id checked in the library: `runJob({ runId })` refuses the ids `--run-id`
 * refuses (empty, unprintable, longer than 100 characters) with a typed
 * UsageError before anything is sent, and accepts 100 printable characters.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/shared/index.js';
import { charges, connectedEmulator, imageJob, workspace } from './helpers.js';

const SCALE = 30;

describe('runJob({ runId })', () => {
  for (const [what, id] of [
    ['empty', ''],
    ['a newline', 'a\nb'],
    ['a zero-width space', 'a\u200bb'],
    ['101 characters', 'x'.repeat(101)],
    ['5,000 characters', 'x'.repeat(5000)],
  ] as const) {
    it(`refuses ${what} with a UsageError; nothing sent, no journal`, async () => {
      const { em, connection } = await connectedEmulator(SCALE);
      const ws = workspace(imageJob({ name: 'lib-run-id', n: 1 }));
      const error = await connection.run(ws.jobPath, { runId: id }).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(error).toBeInstanceOf(UsageError);
      expect((error as UsageError).code).toBe('usage');
      expect((error as UsageError).message).toMatch(/^Expected `runId` to be non-empty printable/);
      expect((error as UsageError).message).not.toContain('\n');
      expect(existsSync(ws.journalPath)).toBe(false);
      expect(await charges(em)).toHaveLength(0);
    });
  }

  it('accepts 100 printable characters', async () => {
    const { em, connection } = await connectedEmulator(SCALE);
    const ws = workspace(imageJob({ name: 'lib-run-id-ok', n: 1 }));
    const id = `lib-${'é'.repeat(96)}`;
    const { result } = await connection.run(ws.jobPath, { runId: id });
    expect(result.runId).toBe(id);
    expect(await charges(em)).toHaveLength(1);
  });
});
