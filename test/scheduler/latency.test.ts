import { describe, expect, it } from 'vitest';
import { parseInferenceTime } from '../../src/scheduler/index.js';

describe('parseInferenceTime', () => {
  it.each([
    ['~20s', 20_000],
    ['~5s', 5_000],
    ['30 seconds', 30_000],
    ['1-2 min', 120_000],
    ['about 3 minutes', 180_000],
    ['500ms', 500],
    ['1 h', 3_600_000],
  ])('reads %s as %d ms (the upper figure)', (text, ms) => {
    expect(parseInferenceTime(text)).toBe(ms);
  });

  it.each([undefined, '', 'fast', 'varies'])('falls back to 30 s for %s', (text) => {
    expect(parseInferenceTime(text)).toBe(30_000);
  });
});
