/**
 * `guardedOutput`: the first error of the stream behind it
 * (EPIPE from a reader that went away) is swallowed and every later write is
 * dropped instead of reaching a broken stream. The real-process behaviour is
 * in signals-pipes.slow.test.ts.
 */
import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { guardedOutput } from '../../src/cli/output-streams.js';

/** A stream that takes `accept` writes, then fails every write with EPIPE. */
function pipeClosingAfter(accept: number) {
  const written: string[] = [];
  let attempts = 0;
  const target = new Writable({
    write(chunk: Buffer, _encoding, done) {
      attempts++;
      if (written.length < accept) {
        written.push(chunk.toString('utf8'));
        done();
        return;
      }
      done(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    },
  });
  return { target, written, attempts: () => attempts };
}

function flushed(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

describe('guardedOutput', () => {
  it('passes writes through while the reader is there', async () => {
    const { target, written } = pipeClosingAfter(10);
    const out = guardedOutput(target as unknown as NodeJS.WriteStream);
    out.write('one\n');
    out.write('two\n');
    await flushed();
    expect(written).toEqual(['one\n', 'two\n']);
  });

  it('drops every write after an EPIPE, without an error event of its own', async () => {
    const { target, written, attempts } = pipeClosingAfter(1);
    const out = guardedOutput(target as unknown as NodeJS.WriteStream);
    const errors: unknown[] = [];
    out.on('error', (error) => errors.push(error));
    out.write('kept\n');
    out.write('fails\n');
    await flushed();
    const tried = attempts();
    out.write('dropped\n');
    out.write('dropped too\n');
    await flushed();
    expect(written).toEqual(['kept\n']);
    expect(tried).toBe(2);
    expect(attempts()).toBe(2); // nothing reached the broken stream after its error
    expect(errors).toEqual([]);
  });

  it('keeps whether the stream behind it is a terminal', () => {
    const { target } = pipeClosingAfter(0);
    const tty = guardedOutput(
      Object.assign(target, { isTTY: true }) as unknown as NodeJS.WriteStream,
    );
    expect(tty.isTTY).toBe(true);
  });
});
