/**
 * The library surface: deliberate exports (no accidental `export *` of
 * internals), and the emulator kept out of the static import graph so
 * `import 'influencer-batch'` and the CLI never load it unasked. The graph
 * check reads dist/: build first.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import * as library from '../../src/index.js';
import { DIST } from '../helpers/index.js';

describe('influencer-batch exports', () => {
  it('exports the five core functions, connect, errors and building blocks only', () => {
    expect(Object.keys(library).sort()).toEqual(
      [
        'ApiError',
        'ContractError',
        'EXIT',
        'GateClosedError',
        'IbatchError',
        'InterruptedError',
        'JobFileError',
        'JournalLockedError',
        'JournalMissingError',
        'JournalVersionError',
        'ModelCatalogError',
        'NetworkError',
        'OutputFolderLockedError',
        'OutputFolderOwnedError',
        'PlanDoesNotFitError',
        'SERVICE_RATE_LIMITS',
        'ServiceChangedError',
        'TimeoutError',
        'UsageError',
        'VERSION',
        'connect',
        'createClient',
        'createGate',
        'createLocalGate',
        'createLogger',
        'expandJob',
        'formatLimits',
        'isIbatchError',
        'loadJob',
        'openJournal',
        'parseLimitsSpec',
        'planJob',
        'runJob',
        'startEmulator',
        'validateJob',
      ].sort(),
    );
    const { loadJob, planJob, runJob, createClient, startEmulator } = library;
    for (const fn of [loadJob, planJob, runJob, createClient, startEmulator]) {
      expect(typeof fn).toBe('function');
    }
    expect(new library.UsageError('x')).toBeInstanceOf(library.IbatchError);
  });

  it('connect() wires a client and gate to the limits it was given', async () => {
    const service = library.connect({
      baseUrl: 'http://127.0.0.1:9/api/v1',
      apiKey: 'sk-test-connect',
      limits: 'requests=10/1s,generations=2/1s,trainings=1/60s,uploads=3/1s',
    });
    try {
      expect(service.limits.generations).toEqual({ count: 2, windowMs: 1000 });
      expect(service.gate.snapshot()).toBeDefined();
      expect(service.accountFingerprint).toMatch(/^[0-9a-f]{16}$/);
      expect(service.accountFingerprint).not.toContain('sk-test');
    } finally {
      await service.close();
      await service.close(); // twice is fine
    }
    expect(() =>
      library.connect({ baseUrl: 'http://127.0.0.1:9', apiKey: 'k', limits: 'nonsense' }),
    ).toThrow(library.IbatchError);
  });

  // The CLI's bundle is made from dist/cli/main.js; test/package/cli-bundle.slow.test.ts looks at the bundle.
  it('the static import graph of dist/index.js and dist/cli/main.js never reaches the emulator', () => {
    for (const entry of ['index.js', 'cli/main.js']) {
      const reached = staticGraph(path.join(DIST, entry));
      expect(reached.size).toBeGreaterThan(10);
      const emulator = [...reached].filter((file) =>
        file.includes(`${path.sep}emulator${path.sep}`),
      );
      expect(emulator, entry).toEqual([]);
    }
    // ...while the lazy import is there to be followed on demand.
    expect(readFileSync(path.join(DIST, 'index.js'), 'utf8')).toContain(
      "import('./emulator/index.js')",
    );
  });
});

/** Files reachable through static `import`/`export ... from` of relative modules. */
function staticGraph(entry: string): Set<string> {
  const seen = new Set<string>();
  const pending = [entry];
  const specifier =
    /^\s*(?:import|export)\s[^'"]*?from\s*['"](\.[^'"]+)['"]|^\s*import\s*['"](\.[^'"]+)['"]/gm;
  for (let file = pending.pop(); file; file = pending.pop()) {
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(specifier)) {
      pending.push(path.resolve(path.dirname(file), (m[1] ?? m[2]) as string));
    }
  }
  return seen;
}
