/**
 * The same event as a Slack incoming-webhook message: `text` (what the
 * notification and clients without blocks show) and `blocks` (Block Kit
 * sections) saying the job, the outcome, the counts, the spend and, for a
 * stop, the command that resumes it.
 */
import type { RunEndEvent } from './event.js';

interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly Record<string, unknown>[];
}

/** Slack's mrkdwn reads `&`, `<` and `>` as markup: these three are escaped, nothing else. */
function mrkdwn(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

function outcome(event: RunEndEvent): string {
  if (event.stopReason !== null) return `stopped (${event.stopReason}, exit ${event.exitCode})`;
  return event.exitCode === 0 ? 'finished' : `finished with failures (exit ${event.exitCode})`;
}

export function slackMessage(event: RunEndEvent): SlackMessage {
  const { counts, credits } = event;
  const icon =
    event.exitCode === 0
      ? ':white_check_mark:'
      : event.stopReason
        ? ':octagonal_sign:'
        : ':warning:';
  const headline = `${icon} ibatch job *${mrkdwn(event.job)}* ${outcome(event)}`;
  const countLine =
    `${counts.succeeded} succeeded, ${counts.failed} failed, ${counts.blocked} blocked, ` +
    `${counts.skipped} skipped, ${counts.pending} pending` +
    (event.done > 0 ? `; ${event.done} already done` : '');
  const spend = `${credits.net} credits net (${credits.charged} charged, ${credits.refunded} refunded)${event.budget === null ? '' : ` of ${event.budget} budget`}`;
  const resume = event.resume ? `Resume: \`${mrkdwn(event.resume)}\`` : '';
  const text = [headline, countLine, spend, resume].filter((s) => s !== '').join('\n');
  const context = [
    `run ${mrkdwn(event.runId ?? '(none)')}`,
    ...(event.report ? [`report ${mrkdwn(event.report)}`] : []),
  ];
  return {
    text,
    blocks: [
      { type: 'section', text: { type: 'mrkdwn', text: `${headline}\n${mrkdwn(event.message)}` } },
      {
        type: 'section',
        fields: [
          { type: 'mrkdwn', text: `*Items*\n${countLine}` },
          { type: 'mrkdwn', text: `*Credits*\n${spend}` },
        ],
      },
      ...(resume ? [{ type: 'section', text: { type: 'mrkdwn', text: resume } }] : []),
      { type: 'context', elements: context.map((t) => ({ type: 'mrkdwn', text: t })) },
    ],
  };
}
