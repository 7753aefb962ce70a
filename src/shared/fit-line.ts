/**
 * A line cut to one terminal row, for the live progress block and the log
 * lines beside it. One column is left free: a line filling the last column
 * leaves the cursor pending a wrap, which some terminals turn into an extra
 * row.
 */

/** A part cut shorter than this says nothing: the end of the line is cut instead. */
const MIN_SHRUNK = 12;

/**
 * `line` cut to fit `columns` with an ellipsis. With `shrinkFirst` (a part of
 * the line, such as an item's label), that part is shortened first, so what
 * follows it (the item's outcome) stays visible; the end is cut only when
 * the part would be left too short to say anything.
 */
export function fitLine(line: string, columns: number, shrinkFirst?: string): string {
  const room = Math.max(1, columns - 1);
  const chars = Array.from(line);
  if (chars.length <= room) return line;
  const at = shrinkFirst ? line.indexOf(shrinkFirst) : -1;
  if (shrinkFirst && at >= 0) {
    const part = Array.from(shrinkFirst);
    const keep = part.length - (chars.length - room) - 1;
    if (keep >= MIN_SHRUNK) {
      const rest = line.slice(at + shrinkFirst.length);
      return `${line.slice(0, at)}${part.slice(0, keep).join('')}…${rest}`;
    }
  }
  return `${chars.slice(0, room - 1).join('')}…`;
}
