import { afterEach, describe, expect, it, vi } from 'vitest';
import { logIsQuiet, noteLogLine, WAIT_REPORT_MS } from '../../src/shared/index.js';

describe('logIsQuiet', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('is false just after a line and true once the log has been quiet nearly WAIT_REPORT_MS', () => {
    noteLogLine();
    const at = Date.now();
    expect(logIsQuiet(at)).toBe(false);
    expect(logIsQuiet(at + WAIT_REPORT_MS)).toBe(true);
  });

  it('speaks when the clock was set back after the last line, instead of staying silent for the difference', () => {
    vi.useFakeTimers({ now: Date.now() + 6 * 3_600_000 });
    noteLogLine();
    vi.useRealTimers();
    expect(logIsQuiet()).toBe(true);
  });
});
