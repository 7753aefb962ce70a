import { describe, expect, it } from 'vitest';
import { SERVICE_RATE_LIMITS } from '../../src/contract/index.js';
import { formatLimits, parseLimitsSpec } from '../../src/limits/index.js';
import { UsageError } from '../../src/shared/index.js';

describe('parseLimitsSpec', () => {
  it('parses the documented default spec to the service limits, and back', () => {
    const spec = 'requests=120/60s,generations=20/60s,trainings=5/3600s,uploads=30/60s';
    expect(parseLimitsSpec(spec)).toEqual(SERVICE_RATE_LIMITS);
    expect(formatLimits(SERVICE_RATE_LIMITS)).toBe(spec);
  });

  it('overrides only the given buckets and accepts every unit', () => {
    const limits = parseLimitsSpec(
      ' generations = 10/1m , uploads=3/500ms,trainings=1/2h,requests=6/1.5s',
    );
    expect(limits).toEqual({
      requests: { count: 6, windowMs: 1500 },
      generations: { count: 10, windowMs: 60_000 },
      trainings: { count: 1, windowMs: 7_200_000 },
      uploads: { count: 3, windowMs: 500 },
    });
    expect(parseLimitsSpec(formatLimits(limits))).toEqual(limits);
    expect(parseLimitsSpec('')).toEqual(SERVICE_RATE_LIMITS);
  });

  it.each([
    ['foo=1/1s', /bucket to be one of requests, generations, trainings, uploads, got "foo"/],
    ['requests=10', /requests=COUNT\/DURATION.*got "requests=10"/],
    ['requests=10/60', /got "requests=10\/60"/],
    ['requests=0/60s', /count >= 1/],
    ['requests=-1/60s', /got "requests=-1\/60s"/],
    ['requests=1/1s,requests=2/1s', /once/],
  ])('refuses %s with a UsageError', (spec, message) => {
    expect(() => parseLimitsSpec(spec)).toThrow(UsageError);
    expect(() => parseLimitsSpec(spec)).toThrow(message);
  });
});
