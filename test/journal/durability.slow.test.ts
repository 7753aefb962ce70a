import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openJournal } from '../../src/journal/index.js';
import { repoPath, tempDir } from '../helpers/index.js';
import { spawnFixture } from './child.js';

describe('kill -9 durability', () => {
  it('every intent the child reported committed is in the journal after SIGKILL', async () => {
    const path = join(tempDir('journal'), 'journal.db');
    const child = spawnFixture('intent-writer.ts', path);
    await child.waitFor((line) => line === 'item-300');
    await child.kill9();
    const printed = child.lines.filter((line) => line.startsWith('item-'));
    expect(printed.length).toBeGreaterThan(300);

    const journal = await openJournal(path); // also takes over the dead child's lock
    try {
      expect(journal.integrityCheck()).toEqual(['ok']);
      const recorded = new Set(journal.listOpenAttempts('crash-run').map((a) => a.itemKey));
      const missing = printed.filter((key) => !recorded.has(key));
      expect(missing).toEqual([]);
      // Each intent committed attempt + item + reservation together.
      for (const item of journal.listItems('crash-run')) {
        const hasAttempt = recorded.has(item.itemKey);
        expect(item.state).toBe(hasAttempt ? 'submitting' : 'pending');
        expect(item.reservedCredits).toBe(hasAttempt ? 1 : 0);
      }
    } finally {
      journal.close();
    }
  });

  it('the journal has no place for an API key', () => {
    const schema = readFileSync(
      repoPath('src', 'journal', 'migrations', '0001-initial.ts'),
      'utf8',
    );
    expect(schema).not.toMatch(/api_?key|authorization|secret|token/i);
  });
});
