import { describe, expect, it } from 'vitest';
import { mergeTargets, notifyTarget, notifyUrlProblem } from '../../src/job/index.js';

describe('notify targets', () => {
  it('a hooks.slack.com URL gets the Slack format unless the job names one', () => {
    expect(notifyTarget('https://hooks.slack.com/services/T/B/x').format).toBe('slack');
    expect(notifyTarget('https://example.com/hooks.slack.com').format).toBe('json');
    expect(notifyTarget('https://hooks.slack.com/services/T/B/x', 'json').format).toBe('json');
  });

  it('flags add to the job; a URL named twice is POSTed once, with the job’s format', () => {
    const job = [notifyTarget('https://a.example/h', 'slack')];
    expect(mergeTargets(job, ['https://b.example/h', 'https://a.example/h'])).toEqual([
      { url: 'https://a.example/h', format: 'slack' },
      { url: 'https://b.example/h', format: 'json' },
    ]);
  });

  it('only absolute http(s) URLs without credentials are receivers', () => {
    expect(notifyUrlProblem('https://example.com/h')).toBeUndefined();
    expect(notifyUrlProblem('http://127.0.0.1:8080/h')).toBeUndefined();
    expect(notifyUrlProblem('example.com/h')).toMatch(/absolute URL/);
    expect(notifyUrlProblem('ftp://example.com/h')).toMatch(/not ftp/);
    expect(notifyUrlProblem('https://user:pw@example.com/h')).toMatch(/user name or password/);
  });
});
