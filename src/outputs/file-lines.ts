/**
 * A file's lines, read a megabyte at a time: as bytes, for a reader that
 * judges most lines by their first bytes (a resume or a rebuild reads a
 * manifest of 100,000 rows it already knows, and decoding every line into
 * a string was most of that read: docs/benchmarks.md), or as text.
 */
import { closeSync, openSync, readSync } from 'node:fs';

/** What a read asks for at a time; a longer line grows the buffer. */
const CHUNK_BYTES = 1 << 20;
const NEWLINE = 0x0a;

/**
 * Each line of `file` without its newline, as a view of the read buffer
 * that is only valid until the next line is asked for (copy it to keep
 * it); the last line too when the file does not end with a newline. None
 * when the file does not exist.
 */
export function* fileLineBytes(file: string): Generator<Buffer> {
  let fd: number;
  try {
    fd = openSync(file, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    let buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    let start = 0;
    let end = 0;
    for (;;) {
      const filled = buffer.subarray(0, end);
      for (
        let nl = filled.indexOf(NEWLINE, start);
        nl !== -1;
        nl = filled.indexOf(NEWLINE, start)
      ) {
        yield filled.subarray(start, nl);
        start = nl + 1;
      }
      // The unfinished line moves to the front; a line longer than the buffer doubles it.
      if (start > 0) {
        buffer.copy(buffer, 0, start, end);
        end -= start;
        start = 0;
      } else if (end === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, end);
        buffer = bigger;
      }
      const read = readSync(fd, buffer, end, buffer.length - end, null);
      if (read === 0) {
        if (end > 0) yield buffer.subarray(0, end);
        return;
      }
      end += read;
    }
  } finally {
    closeSync(fd);
  }
}

/** The lines of a file as text (UTF-8), as `fileLineBytes` reads them. */
export function* fileLines(file: string): Generator<string> {
  for (const line of fileLineBytes(file)) yield line.toString('utf8');
}
