/**
 * Fault cases that need client tuning the CLI does not expose (it has no
 * timeout flag): the run engine (`runJob`) is driven directly with a client
 * whose headers timeout and backoff are small, exactly as `ibatch run` wires
 * it otherwise (local gate, same journal, same scheduler).
 */
import { describe, expect, it } from 'vitest';
import { type ClientEvent, createClient } from '../../src/api/index.js';
import { createLocalGate, parseLimitsSpec } from '../../src/limits/index.js';
import { type RunEvent, type RunResult, runJob } from '../../src/scheduler/index.js';
import { createLogger } from '../../src/shared/index.js';
import { type FaultCase, freshCase, SCALED_LIMITS } from './harness.js';

interface EngineRun {
  readonly result: RunResult;
  readonly clientEvents: readonly ClientEvent[];
  readonly runEvents: readonly RunEvent[];
  readonly log: string;
}

async function runEngine(fc: FaultCase): Promise<EngineRun> {
  const limits = parseLimitsSpec(SCALED_LIMITS);
  const gate = createLocalGate(limits);
  const clientEvents: ClientEvent[] = [];
  const runEvents: RunEvent[] = [];
  let log = '';
  const logger = createLogger({
    format: 'json',
    destination: {
      write: (chunk: string) => {
        log += chunk;
        return true;
      },
    } as unknown as NodeJS.WritableStream,
  });
  const client = createClient({
    baseUrl: fc.em.baseUrl,
    apiKey: fc.account.apiKey,
    gate,
    logger,
    headersTimeoutMs: 300,
    bodyTimeoutMs: 300,
    retry: { baseDelayMs: 20, maxDelayMs: 100 },
    onEvent: (event) => clientEvents.push(event),
  });
  try {
    const result = await runJob({
      jobPath: fc.jobPath,
      client,
      gate,
      limits,
      accountFingerprint: 'faults-test',
      journalPath: fc.journalPath,
      outDir: fc.outDir,
      logger,
      onEvent: (event) => runEvents.push(event),
    });
    return { result, clientEvents, runEvents, log };
  } finally {
    gate.close();
    await client.close();
  }
}

describe('stalled responses time out and are retried', () => {
  it('a stalled create is retried with the same key after the headers timeout: charged once', async () => {
    const fc = await freshCase({ scripts: [{ endpoint: 'createGeneration', fault: 'stall' }] });
    const { result, clientEvents } = await runEngine(fc);
    expect(result.exitCode, result.message).toBe(0);
    expect(result.counts.succeeded).toBe(2);
    const retries = clientEvents.filter(
      (e) => e.type === 'retry' && e.endpoint === 'createGeneration',
    );
    expect(retries.length).toBeGreaterThan(0);
    expect(JSON.stringify(retries)).toMatch(/timeout/i);
    expect((await fc.facts()).injected).toEqual(['stall@createGeneration']);
    expect(await fc.ledger()).toHaveLength(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });

  it('stalled polls are retried and the run completes', async () => {
    const fc = await freshCase({
      scripts: [
        { endpoint: 'getImage', fault: 'stall', times: 2 },
        { endpoint: 'listGenerations', fault: 'stall', times: 2 },
      ],
    });
    const { result } = await runEngine(fc);
    expect(result.exitCode, result.message).toBe(0);
    expect(
      (await fc.facts()).injected.filter((f) => f.startsWith('stall@')).length,
    ).toBeGreaterThan(0);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });
});

describe('a service that keeps failing ends the run with exit 4, resumable', () => {
  it('a 503 storm on creates exhausts the bounded retries, then a rerun finishes', async () => {
    const fc = await freshCase({
      scripts: [{ endpoint: 'createGeneration', fault: 'error-503', times: 40 }],
    });
    const first = await runEngine(fc);
    expect(first.result.exitCode, first.result.message).toBe(4);
    expect(first.result.message).toMatch(/503/);
    expect(first.result.message).toMatch(/run again to resume/i);
    expect(first.result.counts.pending).toBe(2);
    // Bounded: at most 1 + 4 retries per create before giving up.
    const creates503 = (await fc.facts()).injected.filter(
      (f) => f === 'error-503@createGeneration',
    );
    expect(creates503.length).toBeLessThanOrEqual(10);
    expect(await fc.ledger()).toHaveLength(0);

    await fc.em.admin.reset();
    const second = await runEngine(fc);
    expect(second.result.exitCode, second.result.message).toBe(0);
    expect(second.result.counts.succeeded).toBe(2);
    expect([...(await fc.expectNoDoubleCharge()).values()]).toEqual([4, 4]);
  });
});
