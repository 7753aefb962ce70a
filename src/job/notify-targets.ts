/**
 * Where a run's end is announced: the job's `notify:` entries and the
 * `--notify` flags together, each with the body format its receiver reads.
 */

export const NOTIFY_FORMATS = ['json', 'slack'] as const;
export type NotifyFormat = (typeof NOTIFY_FORMATS)[number];

export interface NotifyTarget {
  readonly url: string;
  readonly format: NotifyFormat;
}

/** Slack's incoming webhooks live here; anything else gets the JSON event. */
const SLACK_WEBHOOK_HOST = 'hooks.slack.com';

/** What `url` is wrong with as a receiver, or undefined when it is an absolute http(s) URL. */
export function notifyUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an absolute URL such as https://example.com/hooks/ibatch';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    return `must be an http or https URL, not ${parsed.protocol.replace(/:$/, '')}`;
  }
  if (parsed.username !== '' || parsed.password !== '') {
    // Credentials in a URL end up in logs and process lists: a signed body is the way.
    return 'must not carry a user name or password (set IBATCH_NOTIFY_SECRET to sign the body instead)';
  }
  return undefined;
}

export function notifyTarget(url: string, format?: NotifyFormat): NotifyTarget {
  return {
    url,
    format: format ?? (new URL(url).hostname === SLACK_WEBHOOK_HOST ? 'slack' : 'json'),
  };
}

/**
 * The job's targets, then the flags' (which add to them). A URL named twice
 * gets one POST: the job's entry wins, since only it can name a format.
 */
export function mergeTargets(
  fromJob: readonly NotifyTarget[],
  fromFlags: readonly string[],
): NotifyTarget[] {
  const byUrl = new Map<string, NotifyTarget>();
  for (const target of [...fromJob, ...fromFlags.map((url) => notifyTarget(url))]) {
    if (!byUrl.has(target.url)) byUrl.set(target.url, target);
  }
  return [...byUrl.values()];
}

/** A receiver named in a log line: its origin only (a Slack webhook's path is its secret). */
export function receiverName(url: string): string {
  return new URL(url).origin;
}
