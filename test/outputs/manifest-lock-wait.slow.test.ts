/**
 * A run appending to a manifest whose lock another process holds says what
 * it waits for before the log has been quiet for WAIT_REPORT_MS, naming the
 * holder, and appends once the holder lets go.
 */
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import { MANIFEST_LOCK, ManifestWriter, readManifest } from '../../src/outputs/index.js';
import { createLogger, WAIT_REPORT_MS } from '../../src/shared/index.js';
import { capture, jsonLogs, tempDir } from '../helpers/index.js';
import { FIXTURE_ROWS } from './fixtures/rows.js';

it("an append waiting for another process's manifest lock logs the holder, then appends", () => {
  const dir = tempDir('manifest-wait');
  const sink = capture();
  const writer = ManifestWriter.open(dir, createLogger({ format: 'json', destination: sink }));
  const lock = path.join(dir, MANIFEST_LOCK);
  // Another process on this host, holding the lock past one quiet log interval.
  const holder = spawn('sh', ['-c', `sleep ${(WAIT_REPORT_MS + 1500) / 1000}; rm -f "${lock}"`], {
    stdio: 'ignore',
  });
  writeFileSync(
    lock,
    JSON.stringify({ pid: holder.pid, hostname: hostname(), startedAt: Date.now() }),
  );
  const [row] = FIXTURE_ROWS;
  if (!row) throw new Error('the fixture has rows');

  expect(writer.append(row)).toBe('appended');
  writer.close();

  const waits = jsonLogs(sink.text()).filter((line) => line.event === 'manifest.waiting');
  expect(waits.length).toBeGreaterThanOrEqual(1);
  expect(waits[0]?.msg).toContain(`waiting for the manifest of ${dir}`);
  expect(waits[0]?.msg).toContain(`process ${holder.pid} on ${hostname()}`);
  expect(waits[0]?.msg).toContain('of at most 60 s');
  // A line's pid and hostname are pino's (the logging process's) names: the holder has its own field.
  expect(waits[0]?.pid).not.toBe(holder.pid);
  expect(waits[0]?.holder).toEqual({ pid: holder.pid, hostname: hostname() });
  expect(readManifest(dir)).toEqual([row]);
}, 30_000);
