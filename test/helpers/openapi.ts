/**
 * Validates requests and responses against openapi/service.yaml with
 * openapi-backend (ajv), independently of the zod schemas in src/contract/.
 *
 * The point is a second opinion: the client and the emulator both build on the
 * zod schemas, so a mistake there would go unnoticed by either. Nothing here
 * imports src/contract.
 *
 * Paths: pass either the full path (`/api/v1/models`) or the path relative to
 * the base URL (`/models`); a query string on the path is accepted too.
 * Every function returns the list of violations, empty when the message conforms.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import {
  type Document,
  OpenAPIBackend,
  type Operation,
  SetMatchType,
  type ValidationResult,
} from 'openapi-backend';
import { parse } from 'yaml';

export const OPENAPI_FILE = fileURLToPath(new URL('../../openapi/service.yaml', import.meta.url));

/** The version prefix of the service's base URL, stripped from full paths. */
const VERSION_PREFIX = '/api/v1';

/** The parsed document, as written (references not resolved). */
export const openApiDocument = parse(readFileSync(OPENAPI_FILE, 'utf8')) as OpenApiDocument;

export interface OpenApiDocument {
  openapi: string;
  info: { version: string; title: string };
  security?: Array<Record<string, string[]>>;
  paths: Record<string, Record<string, { operationId?: string } & Record<string, unknown>>>;
  components: Record<string, Record<string, unknown>>;
  [extension: string]: unknown;
}

type Headers = Record<string, string | string[] | undefined>;

export interface RequestToCheck {
  method: string;
  /** Full (`/api/v1/...`) or relative path, optionally with a query string. */
  path: string;
  /** Query parameters; when absent they are read from the path's query string. */
  query?: Record<string, string | string[]>;
  headers?: Headers;
  /** A parsed JSON value, or the raw body text (parsed here), or undefined for no body. */
  body?: unknown;
}

export interface ResponseToCheck {
  method: string;
  path: string;
  status: number;
  headers?: Headers;
  /** A parsed JSON value, or the raw body text (parsed here when it is JSON). */
  body?: unknown;
}

type AjvError = NonNullable<ValidationResult['errors']>[number];

// JSON Schema formats the service uses. openapi-backend registers none of
// these, and ajv (strict: false) would silently ignore them.
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const isAbsoluteUri = (value: string) =>
  /^[a-zA-Z][a-zA-Z0-9+.-]*:\S+$/.test(value) && URL.canParse(value);

const backend = new OpenAPIBackend({
  // A deep copy: openapi-backend dereferences in place.
  definition: structuredClone(openApiDocument) as unknown as Document,
  apiRoot: '/',
  quick: true,
  validate: true,
  // Report every violation of a message, not only the first.
  ajvOpts: { allErrors: true },
  customizeAjv: (ajv) => {
    ajv.addFormat('uuid', UUID);
    ajv.addFormat('uri', { type: 'string', validate: isAbsoluteUri });
    ajv.addFormat('date-time', {
      type: 'string',
      validate: (value: string) => DATE_TIME.test(value) && !Number.isNaN(Date.parse(value)),
    });
    return ajv;
  },
});
await backend.init();

/** Splits `path?query` and strips the version prefix. */
function splitPath(path: string): { relative: string; queryString: string } {
  const [pathname = '', queryString = ''] = path.split('?', 2);
  const relative =
    pathname === VERSION_PREFIX || pathname.startsWith(`${VERSION_PREFIX}/`)
      ? pathname.slice(VERSION_PREFIX.length) || '/'
      : pathname;
  return { relative, queryString };
}

/** The documented operation for method + path, or undefined. */
export function findOperation(method: string, path: string): Operation | undefined {
  const { relative } = splitPath(path);
  return backend.router.matchOperation({ method, path: relative, headers: {} });
}

function describe(error: AjvError): string {
  const where = error.instancePath || '/';
  const params = error.params as Record<string, unknown>;
  let detail = '';
  if (error.keyword === 'additionalProperties') detail = ` (\`${params.additionalProperty}\`)`;
  if (error.keyword === 'enum') detail = ` ${JSON.stringify(params.allowedValues)}`;
  if (error.keyword === 'const') detail = ` ${JSON.stringify(params.allowedValue)}`;
  return `${where} ${error.message ?? error.keyword}${detail}`;
}

function headerValue(headers: Headers, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === wanted) return Array.isArray(value) ? value.join(', ') : value;
  }
  return undefined;
}

/** Header map with lowercase keys and single string values, as openapi-backend expects. */
function plainHeaders(headers: Headers): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(headers)) {
    if (value !== undefined)
      out[key.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function isJsonMediaType(contentType: string | undefined): boolean {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  return media === 'application/json' || media.endsWith('+json');
}

/** Parses a raw text body; objects and other values pass through. */
function parseBody(body: unknown): { value: unknown; error?: string } {
  if (typeof body !== 'string') return { value: body };
  if (body === '') return { value: undefined };
  try {
    return { value: JSON.parse(body) };
  } catch (error) {
    return { value: body, error: `body is not JSON: ${(error as Error).message}` };
  }
}

function requiresBearer(operation: Operation): boolean {
  const security = operation.security ?? openApiDocument.security ?? [];
  return security.some((requirement) => 'bearerAuth' in requirement);
}

export function validateRequest(request: RequestToCheck): string[] {
  const { relative, queryString } = splitPath(request.path);
  const operation = findOperation(request.method, relative);
  if (!operation)
    return [`no documented operation for ${request.method.toUpperCase()} ${relative}`];

  const headers = plainHeaders(request.headers ?? {});
  const violations: string[] = [];
  if (requiresBearer(operation) && !/^Bearer \S+$/.test(headers.authorization ?? '')) {
    violations.push('header Authorization: expected `Bearer <API_KEY>`');
  }

  const parsed = parseBody(request.body);
  if (parsed.error) violations.push(parsed.error);
  if (!operation.requestBody && parsed.value !== undefined) {
    violations.push('unexpected request body');
  }
  if (
    operation.requestBody &&
    parsed.value !== undefined &&
    !isJsonMediaType(headers['content-type'])
  ) {
    violations.push(
      `header Content-Type: expected application/json, got ${headers['content-type']}`,
    );
  }

  const query = request.query ?? Object.fromEntries(groupQuery(new URLSearchParams(queryString)));
  const result = backend.validator.validateRequest(
    {
      method: request.method,
      path: relative,
      headers,
      query,
      body: parsed.error ? undefined : parsed.value,
    },
    operation,
  );
  for (const error of result.errors ?? []) violations.push(describe(error));
  return violations;
}

function* groupQuery(params: URLSearchParams): Generator<[string, string | string[]]> {
  for (const key of new Set(params.keys())) {
    const values = params.getAll(key);
    yield [key, values.length === 1 ? (values[0] as string) : values];
  }
}

interface DocumentedResponse {
  headers?: Record<string, { required?: boolean }>;
  content?: Record<string, unknown>;
}

function documentedResponse(operation: Operation, status: number): DocumentedResponse | undefined {
  const responses = (operation.responses ?? {}) as Record<string, DocumentedResponse>;
  return (
    responses[String(status)] ?? responses[`${Math.floor(status / 100)}XX`] ?? responses.default
  );
}

export function validateResponse(response: ResponseToCheck): string[] {
  const { relative } = splitPath(response.path);
  const operation = findOperation(response.method, relative);
  if (!operation)
    return [`no documented operation for ${response.method.toUpperCase()} ${relative}`];
  const documented = documentedResponse(operation, response.status);
  if (!documented)
    return [`status ${response.status} is not documented for ${operation.operationId}`];

  const headers = response.headers ?? {};
  const violations: string[] = [];
  for (const [name, header] of Object.entries(documented.headers ?? {})) {
    if (header.required && headerValue(headers, name) === undefined) {
      violations.push(`missing response header ${name}`);
    }
  }
  const headerResult = backend.validator.validateResponseHeaders(plainHeaders(headers), operation, {
    statusCode: response.status,
    setMatchType: SetMatchType.Any,
  });
  for (const error of headerResult.errors ?? []) violations.push(describe(error));

  if (documented.content?.['application/json']) {
    const contentType = headerValue(headers, 'content-type');
    if (response.headers && !isJsonMediaType(contentType)) {
      violations.push(`header Content-Type: expected application/json, got ${contentType}`);
    }
    const parsed = parseBody(response.body);
    if (parsed.error) violations.push(parsed.error);
    else if (parsed.value === undefined) violations.push('missing JSON response body');
    else {
      const result = backend.validator.validateResponse(parsed.value, operation, response.status);
      for (const error of result.errors ?? []) violations.push(describe(error));
    }
  }
  return violations;
}
