/**
 * The process's stdout and stderr as the CLI writes them: a reader that went
 * away (`ibatch run JOB | head -2`, a closed terminal) must never kill a run
 * or leave its journal `running`. Node ignores SIGPIPE, so a write to a closed
 * pipe surfaces as an EPIPE (EBADF, EIO for a hung-up terminal) `error` event,
 * which, unhandled, ends the process with a stack. Here any error of the
 * underlying stream means "nobody reads this any more": further writes to it
 * are dropped and the command goes on to its own end and exit code.
 */
import { Writable } from 'node:stream';

export type OutputStream = Writable & {
  readonly isTTY?: boolean;
  /** The terminal's size, when it is one. */
  readonly columns?: number;
  readonly rows?: number;
};

/** Wraps `target` so writes after its first error (EPIPE, EBADF, ...) are dropped. */
export function guardedOutput(target: NodeJS.WriteStream): OutputStream {
  let gone = false;
  // Swallowed on purpose: there is no one left to tell on this stream.
  target.on('error', () => {
    gone = true;
  });
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      if (!gone && !target.destroyed) {
        try {
          target.write(chunk);
        } catch {
          gone = true;
        }
      }
      // Never held back: what cannot be written is dropped, not queued.
      done();
    },
  });
  // The progress display and the log format depend on the terminal behind it:
  // whether it is one, and its size, read live (it changes on resize).
  if (target.isTTY) target.on('resize', () => stream.emit('resize'));
  Object.defineProperties(stream, {
    columns: { get: () => target.columns, enumerable: true },
    rows: { get: () => target.rows, enumerable: true },
  });
  return Object.assign(stream, { isTTY: target.isTTY });
}
