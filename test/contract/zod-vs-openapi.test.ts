/**
 * The zod schemas (src/contract) and openapi/service.yaml describe the same
 * wire contract twice. Each sample below is judged by both and they must agree,
 * except for the deliberate tolerances listed per resource (`zodLooser`,
 * `zodStricter`), each with its reason.
 */
import { describe, expect, it } from 'vitest';
import { REQUEST_CASES } from './fixtures/request-samples.js';
import type { Sample } from './fixtures/resource-case.js';
import { RESPONSE_CASES } from './fixtures/response-samples.js';

const CASES = [...REQUEST_CASES, ...RESPONSE_CASES];

function omit(sample: Sample, key: string): Sample {
  const { [key]: _removed, ...rest } = sample;
  return rest;
}

describe.each(CASES)('$resource: zod and OpenAPI agree', (resourceCase) => {
  const zodAccepts = (value: unknown) => resourceCase.zod.safeParse(value).success;

  it('both accept the valid samples', () => {
    for (const value of resourceCase.valid) {
      expect(zodAccepts(value), JSON.stringify(value)).toBe(true);
      expect(resourceCase.openapi(value), JSON.stringify(value)).toEqual([]);
    }
  });

  it('both reject each sample that lacks a required field', () => {
    const [first] = resourceCase.valid;
    for (const key of resourceCase.required) {
      const value = omit(first as Sample, key);
      expect(zodAccepts(value), `without ${key}`).toBe(false);
      expect(resourceCase.openapi(value), `without ${key}`).not.toEqual([]);
    }
  });

  it('both reject the invalid samples', () => {
    for (const value of resourceCase.invalid) {
      expect(zodAccepts(value), JSON.stringify(value)).toBe(false);
      expect(resourceCase.openapi(value), JSON.stringify(value)).not.toEqual([]);
    }
  });

  // Only a resource with deliberate tolerances has this test: the others have nothing to check.
  const tolerated = [...(resourceCase.zodLooser ?? []), ...(resourceCase.zodStricter ?? [])];
  if (tolerated.length > 0) {
    it('differ only where the tolerance is deliberate', () => {
      for (const { why, value } of resourceCase.zodLooser ?? []) {
        expect(zodAccepts(value), why).toBe(true);
        expect(resourceCase.openapi(value), why).not.toEqual([]);
      }
      for (const { why, value } of resourceCase.zodStricter ?? []) {
        expect(zodAccepts(value), why).toBe(false);
        expect(resourceCase.openapi(value), why).toEqual([]);
      }
    });
  }
});
