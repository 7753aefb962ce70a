/**
 * Which unfinished run on another service `run` refuses for (and which it
 * moves with `--service-moved`): the rule of src/scheduler/decide/service-move.ts,
 * on journal records. The CLI side is test/cli/service-identity.slow.test.ts.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type Journal, openJournal } from '../../../src/journal/index.js';
import {
  assertSameService,
  ServiceChangedError,
} from '../../../src/scheduler/decide/service-move.js';
import { tempDir } from '../../helpers/index.js';

const A = 'http://127.0.0.1:8080/api/v1';
const B = 'https://api.example.com/api/v1';
const here = (service: string, fp = 'fp1') => ({ service, scope: `${service}#${fp}` });

async function journalWith(options: Record<string, unknown>, finished = false): Promise<Journal> {
  const journal = await openJournal(join(tempDir('journal'), 'journal.db'));
  journal.createRun({
    runId: 'r1',
    jobName: 'j',
    jobPath: '/j.yaml',
    jobHash: 'h',
    budget: null,
    options,
    tags: {},
  });
  journal.setRunStatus('r1', finished ? 'completed' : 'interrupted');
  return journal;
}

describe('assertSameService', () => {
  it('another spelling of the same service is the same service', async () => {
    const journal = await journalWith({ service: A, scope: `${A}#fp1` });
    try {
      expect(assertSameService(journal, 'j', here('http://localhost:8080/api/v1/'), {})).toBe(
        undefined,
      );
    } finally {
      journal.close();
    }
  });

  it('another service: refused naming both and the account; moved: the run to resume', async () => {
    const journal = await journalWith({ service: A, scope: `${A}#fp1` });
    try {
      const refuse = () => assertSameService(journal, 'j', here(B, 'fp2'), {});
      expect(refuse).toThrow(ServiceChangedError);
      expect(refuse).toThrow(
        /on http:\/\/localhost:8080\/api\/v1 with another API key, but this run is on https:\/\/api\.example\.com\/api\/v1/,
      );
      expect(assertSameService(journal, 'j', here(B), { moved: true })?.runId).toBe('r1');
    } finally {
      journal.close();
    }
  });

  it('a finished run, a run older than the service field, an in-process emulator run: no refusal', async () => {
    for (const [options, finished] of [
      [{ service: A }, true],
      [{}, false],
      [{ service: A, served: 'in-process-emulator' }, false],
    ] as const) {
      const journal = await journalWith(options, finished);
      try {
        expect(assertSameService(journal, 'j', here(B), {})).toBe(undefined);
      } finally {
        journal.close();
      }
    }
  });
});
