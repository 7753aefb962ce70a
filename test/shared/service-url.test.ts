import { describe, expect, it } from 'vitest';
import { canonicalScope, canonicalServiceUrl, isLoopbackHost } from '../../src/shared/index.js';

const same = (a: string, b: string) => expect(canonicalServiceUrl(a)).toBe(canonicalServiceUrl(b));
const differ = (a: string, b: string) =>
  expect(canonicalServiceUrl(a)).not.toBe(canonicalServiceUrl(b));

describe('canonicalServiceUrl: one identity per service', () => {
  it('ignores the case of scheme and host, never of the path', () => {
    same('HTTPS://API.Example.COM/api/v1', 'https://api.example.com/api/v1');
    expect(canonicalServiceUrl('HTTPS://API.Example.COM/api/v1')).toBe(
      'https://api.example.com/api/v1',
    );
    differ('https://api.example.com/API/v1', 'https://api.example.com/api/v1');
  });

  it("drops the scheme's default port, keeps any other", () => {
    same('https://api.example.com:443/api/v1', 'https://api.example.com/api/v1');
    same('http://localhost:80/api/v1', 'http://localhost/api/v1');
    differ('https://api.example.com:8443/api/v1', 'https://api.example.com/api/v1');
    differ('http://api.example.com:443/api/v1', 'https://api.example.com/api/v1');
  });

  it('drops a trailing dot in the host and trailing slashes in the path', () => {
    same('https://api.example.com./api/v1/', 'https://api.example.com/api/v1');
    same('https://api.example.com/api/v1//', 'https://api.example.com/api/v1');
    same('https://api.example.com/', 'https://api.example.com');
    expect(canonicalServiceUrl('https://api.example.com./api/v1/')).toBe(
      'https://api.example.com/api/v1',
    );
  });

  it('names every loopback spelling on one port as one host', () => {
    const canonical = 'http://localhost:8080/api/v1';
    for (const spelling of [
      'http://127.0.0.1:8080/api/v1',
      'http://127.1.2.3:8080/api/v1',
      'http://LOCALHOST.:8080/api/v1/',
      'http://[::1]:8080/api/v1',
      'http://[0:0:0:0:0:0:0:1]:8080/api/v1',
      'http://app.localhost:8080/api/v1',
    ]) {
      expect(canonicalServiceUrl(spelling), spelling).toBe(canonical);
    }
    differ('http://127.0.0.1:8080/api/v1', 'http://127.0.0.1:8081/api/v1');
  });

  it('keeps IPv6 hosts in brackets, compressed and lower case', () => {
    expect(canonicalServiceUrl('https://[2001:DB8:0:0:0:0:0:1]:443/api/v1/')).toBe(
      'https://[2001:db8::1]/api/v1',
    );
  });

  it('leaves out credentials, query and fragment, and never throws', () => {
    same('https://u:p@api.example.com/api/v1?x=1#y', 'https://api.example.com/api/v1');
    expect(canonicalServiceUrl('not a url')).toBe('not a url');
    expect(canonicalServiceUrl('')).toBe('');
  });

  it('is idempotent', () => {
    for (const url of ['http://[::1]:9/a/', 'HTTPS://X.Y.:443//', 'http://127.0.0.1:1/api/v1']) {
      const once = canonicalServiceUrl(url);
      expect(canonicalServiceUrl(once)).toBe(once);
    }
  });
});

describe('canonicalScope', () => {
  it('makes the service part canonical and keeps the account fingerprint', () => {
    expect(canonicalScope('http://127.0.0.1:8080/api/v1#0123456789abcdef')).toBe(
      'http://localhost:8080/api/v1#0123456789abcdef',
    );
    expect(canonicalScope('no-fingerprint')).toBe('no-fingerprint');
  });
});

describe('isLoopbackHost', () => {
  it('knows the loopback names, with or without brackets or a trailing dot', () => {
    for (const host of [
      'localhost',
      'LOCALHOST.',
      'a.localhost',
      '127.0.0.1',
      '127.9.9.9',
      '[::1]',
      '::1',
    ])
      expect(isLoopbackHost(host), host).toBe(true);
    for (const host of ['example.com', '128.0.0.1', '[2001:db8::1]', 'localhost.example.com'])
      expect(isLoopbackHost(host), host).toBe(false);
  });
});
