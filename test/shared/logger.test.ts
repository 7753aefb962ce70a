/**
 * The human log lines (src/shared/logger.ts) on a terminal: an info line is
 * one row of the terminal's width (the item's label shortened first, so the
 * outcome stays), a warning is kept whole, user input shows its control
 * characters escaped, and an event the command prints itself is left out.
 * JSON lines are unchanged.
 */
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/shared/index.js';
import { capture } from '../helpers/index.js';

function terminal(columns: number) {
  return Object.assign(capture(), { isTTY: true, columns });
}

const LABEL = 'sku=A003, product=an extraordinarily long product description, setting=a kitchen';

describe('pretty log lines on a terminal', () => {
  it('cuts an info line to one row, shortening the label before the outcome', () => {
    const out = terminal(80);
    const logger = createLogger({ destination: out, color: false });
    logger.info(
      { event: 'item.succeeded', item: 'a-key', label: LABEL },
      `shots/${LABEL} succeeded`,
    );
    const [line] = out.text().split('\n');
    expect(Array.from(line ?? '').length).toBeLessThan(80);
    expect(line).toMatch(/^\d\d:\d\d:\d\d info {2}shots\/sku=A003, product=an .*… succeeded$/);
    expect(line).not.toContain('event=');
  });

  it('keeps a warning whole, with its fields', () => {
    const out = terminal(80);
    const logger = createLogger({ destination: out, color: false });
    logger.warn({ event: 'item.failed', label: LABEL }, `shots/${LABEL} failed: too dark`);
    expect(out.text()).toContain(`shots/${LABEL} failed: too dark  event=item.failed`);
  });

  it('escapes control characters in the message and the fields', () => {
    const out = terminal(200);
    const logger = createLogger({ destination: out, color: false });
    logger.info({ value: 'x\x1b[2J' }, 'evil \x1b]0;pwned\x07 row');
    expect(out.text()).toContain('evil \\x1b]0;pwned\\x07 row  value=x\\x1b[2J');
    expect(out.text()).not.toContain('\x1b');
  });

  it('leaves out the events the command prints itself; JSON lines keep them', () => {
    const out = terminal(80);
    createLogger({ destination: out, prettyOmits: ['run.finished'] }).info(
      { event: 'run.finished' },
      'finished: 1 item(s) succeeded',
    );
    expect(out.text()).toBe('');
    const json = capture();
    createLogger({ destination: json, format: 'json', prettyOmits: ['run.finished'] }).info(
      { event: 'run.finished' },
      'finished: 1 item(s) succeeded',
    );
    expect(JSON.parse(json.text())).toMatchObject({ event: 'run.finished' });
  });
});
