import { readFileSync } from 'node:fs';
import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ENDPOINTS, ERROR_CODES, LIMITS } from '../../src/contract/index.js';
import {
  OPENAPI_FILE,
  openApiDocument,
  validateRequest,
  validateResponse,
} from '../helpers/openapi.js';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'];
const AUTH = { authorization: 'Bearer ifk_live_test', 'content-type': 'application/json' };
const SUCCESS_HEADERS = {
  'content-type': 'application/json',
  'x-ratelimit-limit': '120',
  'x-ratelimit-remaining': '119',
};

function operations(): Array<{ operationId: string; method: string; path: string }> {
  return Object.entries(openApiDocument.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.includes(method))
      .map(([method, operation]) => ({
        operationId: String((operation as { operationId?: string }).operationId),
        method: method.toUpperCase(),
        path,
      })),
  );
}

describe('openapi/service.yaml', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const validator = new Validator();
    const result = await validator.validate(parse(readFileSync(OPENAPI_FILE, 'utf8')));
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
    expect(openApiDocument.openapi).toBe('3.1.0');
  });

  it('carries interface version 1.0.0', () => {
    expect(openApiDocument.info.version).toBe('1.0.0');
  });

  it('has exactly the 12 operations of ENDPOINTS, same ids, methods and paths', () => {
    const documented = operations().sort((a, b) => a.operationId.localeCompare(b.operationId));
    const expected = Object.entries(ENDPOINTS)
      .map(([operationId, spec]) => ({ operationId, method: spec.method, path: spec.path }))
      .sort((a, b) => a.operationId.localeCompare(b.operationId));
    expect(documented).toEqual(expected);
    expect(documented).toHaveLength(12);
  });

  it('lists every error code of ERROR_CODES in its error examples', () => {
    const responses = openApiDocument.components.responses as Record<
      string,
      { content: { 'application/json': { examples: Record<string, { value: unknown }> } } }
    >;
    const exampleCodes = Object.values(responses).flatMap((response) =>
      Object.values(response.content['application/json'].examples).map(
        (example) => (example.value as { error: { code: string } }).error.code,
      ),
    );
    expect(new Set(exampleCodes)).toEqual(new Set(Object.values(ERROR_CODES)));
  });

  it('requires bearer authentication on every operation', () => {
    expect(openApiDocument.security).toEqual([{ bearerAuth: [] }]);
    for (const { path, method } of operations()) {
      const operation = openApiDocument.paths[path]?.[method.toLowerCase()] as {
        security?: unknown;
        responses: Record<string, unknown>;
      };
      expect(operation.security, `${method} ${path}`).toBeUndefined();
      expect(Object.keys(operation.responses), `${method} ${path}`).toEqual(
        expect.arrayContaining(['401', '429', '5XX']),
      );
    }
  });

  it('uses the numbers of LIMITS', () => {
    const at = (path: string): unknown =>
      path
        .split('.')
        .reduce<unknown>(
          (node, key) => (node as Record<string, unknown> | undefined)?.[key],
          openApiDocument.components,
        );
    const request = 'schemas.TrainingJobRequest.properties';
    expect(at('schemas.AssetUploadRequest.properties.sizeBytes.maximum')).toBe(
      LIMITS.uploadMaxBytes,
    );
    expect(at('schemas.GenerationRequest.properties.copies.maximum')).toBe(LIMITS.copiesMax);
    expect(at(`${request}.assetUrls.maxItems`)).toBe(LIMITS.trainingImagesMax);
    expect(at(`${request}.name.maxLength`)).toBe(LIMITS.trainingNameMax);
    expect(at(`${request}.username.minLength`)).toBe(LIMITS.usernameMin);
    expect(at(`${request}.username.maxLength`)).toBe(LIMITS.usernameMax);
    expect(at('parameters.IdempotencyKeyRequired.schema.maxLength')).toBe(LIMITS.idempotencyKeyMax);
    expect(at('parameters.IdempotencyKeyOptional.schema.maxLength')).toBe(LIMITS.idempotencyKeyMax);
  });
});

describe('the validator helpers', () => {
  const generation = { input: { prompt: 'a cat' }, copies: 2 };

  it('accept a valid request, with a full or a relative path', () => {
    for (const path of ['/api/v1/models/m1/generations', '/models/m1/generations']) {
      expect(validateRequest({ method: 'POST', path, headers: AUTH, body: generation })).toEqual(
        [],
      );
    }
    expect(
      validateRequest({
        method: 'GET',
        path: '/api/v1/generations?kind=video&limit=50',
        headers: AUTH,
      }),
    ).toEqual([]);
  });

  it('report a bad request body', () => {
    const messages = validateRequest({
      method: 'POST',
      path: '/assets/presign',
      headers: AUTH,
      body: { mimeType: 'image/png', sizeBytes: LIMITS.uploadMaxBytes + 1 },
    });
    expect(messages).toEqual(['/requestBody/sizeBytes must be <= 8388608']);
  });

  it('report an unknown property on a strict request body, but not inside `input`', () => {
    const extra = { ...generation, seed: 7 };
    expect(
      validateRequest({
        method: 'POST',
        path: '/models/m1/preview-credits',
        headers: AUTH,
        body: extra,
      }),
    ).toEqual(['/requestBody must NOT have additional properties (`seed`)']);
    const openInput = { input: { prompt: 'x', seed: 7 } };
    expect(
      validateRequest({
        method: 'POST',
        path: '/models/m1/preview-credits',
        headers: AUTH,
        body: openInput,
      }),
    ).toEqual([]);
  });

  it('report missing auth, a missing or too long Idempotency-Key, bad query and unknown routes', () => {
    expect(validateRequest({ method: 'GET', path: '/account', headers: {} })).toEqual([
      'header Authorization: expected `Bearer <API_KEY>`',
    ]);
    const training = {
      name: 'Ava',
      style: 'realistic',
      gender: 'female',
      assetUrls: ['https://cdn.example/a.png'],
      consentAcknowledged: true,
    };
    expect(
      validateRequest({ method: 'POST', path: '/training/jobs', headers: AUTH, body: training }),
    ).toEqual(["/header must have required property 'idempotency-key'"]);
    const longKey = { ...AUTH, 'Idempotency-Key': 'k'.repeat(201) };
    expect(
      validateRequest({
        method: 'POST',
        path: '/models/m/generations',
        headers: longKey,
        body: generation,
      }),
    ).toEqual(['/header/idempotency-key must NOT have more than 200 characters']);
    expect(validateRequest({ method: 'GET', path: '/generations?limit=0', headers: AUTH })).toEqual(
      ["/query must have required property 'kind'", '/query/limit must be >= 1'],
    );
    expect(validateRequest({ method: 'DELETE', path: '/account', headers: AUTH })).toEqual([
      'no documented operation for DELETE /account',
    ]);
  });

  it('report a response missing a required field, and pass a valid one', () => {
    const account = {
      plan: 'pro',
      subscribed: true,
      credits: 10,
      purchaseUrl: 'https://x.example/buy',
    };
    const ok = { method: 'GET', path: '/api/v1/account', status: 200, headers: SUCCESS_HEADERS };
    expect(validateResponse({ ...ok, body: account })).toEqual([]);
    expect(validateResponse({ ...ok, body: JSON.stringify({ ...account, extra: 1 }) })).toEqual([]);
    const { credits: _omitted, ...withoutCredits } = account;
    expect(validateResponse({ ...ok, body: withoutCredits })).toEqual([
      "/ must have required property 'credits'",
    ]);
  });

  it('check response headers: X-RateLimit-* on success, integer Retry-After on 429', () => {
    const account = {
      plan: 'pro',
      subscribed: true,
      credits: 10,
      purchaseUrl: 'https://x.example/buy',
    };
    expect(
      validateResponse({
        method: 'GET',
        path: '/account',
        status: 200,
        headers: { 'content-type': 'application/json', 'x-ratelimit-limit': '120' },
        body: account,
      }),
    ).toEqual(['missing response header X-RateLimit-Remaining']);
    const limited = { error: { code: 'rate_limited', message: 'slow down' } };
    const tooMany = { method: 'GET', path: '/account', status: 429, body: limited };
    expect(
      validateResponse({ ...tooMany, headers: { 'content-type': 'application/json' } }),
    ).toEqual(['missing response header Retry-After']);
    expect(
      validateResponse({
        ...tooMany,
        headers: { 'content-type': 'application/json', 'retry-after': 'soon' },
      }),
    ).toEqual(['/headers/retry-after must be integer']);
    expect(
      validateResponse({
        ...tooMany,
        headers: { 'content-type': 'application/json', 'Retry-After': '7' },
      }),
    ).toEqual([]);
  });

  it('report undocumented statuses and malformed error bodies', () => {
    expect(validateResponse({ method: 'GET', path: '/account', status: 404, body: {} })).toEqual([
      'status 404 is not documented for getAccount',
    ]);
    expect(
      validateResponse({
        method: 'GET',
        path: '/models/x',
        status: 503,
        body: { error: { code: 'x' } },
      }),
    ).toEqual(["/error must have required property 'message'"]);
    expect(
      validateResponse({
        method: 'GET',
        path: '/models/x',
        status: 500,
        body: 'Internal Server Error',
      }),
    ).toEqual([expect.stringMatching(/^body is not JSON/)]);
  });
});
