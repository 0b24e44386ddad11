import { Highlight } from './protocol';

/**
 * The matched words in a QuickPick row. The stable API has no way to highlight parts of an item's
 * `detail` (QuickPickItem `highlights` is a proposed API, closed to published extensions, and the
 * picker's own filter highlighting marks what the filter matched, not what the index matched), so
 * matched words are wrapped in these visible marks: «word». They are not markdown (the detail line is
 * not rendered as markdown) and rarely occur in documentation text.
 */
export const MARK_OPEN = '«';
export const MARK_CLOSE = '»';

/** QuickPick text renders `$(name)` as an icon; `\$(name)` shows it as written. */
const ICON = /\$\(([A-Za-z0-9-]+(?:~[A-Za-z]+)?)\)/g;

export function escapeIcons(text: string): string {
  return text.replace(ICON, '\\$($1)');
}

interface Segment {
  text: string;
  marked: boolean;
}

/**
 * `snippet` on one line with each highlighted range wrapped in «…», cut at a word boundary to about
 * `max` characters (marks included) with a closing mark kept when the cut falls inside one.
 * `highlights` are `[start, end)` code-point ranges (docs/lsp-protocol.md); ranges that are not
 * integers, fall outside the snippet, or overlap an earlier one are ignored. Icon syntax is escaped.
 */
export function markSnippet(snippet: string, highlights: readonly Highlight[] | undefined, max: number): string {
  const points = Array.from(snippet);
  const segments: Segment[] = [];
  let at = 0;
  for (const range of validRanges(highlights, points.length)) {
    if (range[0] < at) {
      continue;
    }
    segments.push({ text: points.slice(at, range[0]).join(''), marked: false });
    segments.push({ text: points.slice(range[0], range[1]).join(''), marked: true });
    at = range[1];
  }
  segments.push({ text: points.slice(at).join(''), marked: false });
  return escapeIcons(cut(flatten(segments), max));
}

function validRanges(highlights: readonly Highlight[] | undefined, length: number): Highlight[] {
  const ok = (highlights ?? []).filter(
    (r) => Array.isArray(r) && Number.isInteger(r[0]) && Number.isInteger(r[1]) && r[0] >= 0 && r[0] < r[1] && r[1] <= length,
  );
  return [...ok].sort((a, b) => a[0] - b[0]);
}

/** Whitespace runs become one space (also across segments); leading and trailing space goes. */
function flatten(segments: Segment[]): Segment[] {
  const out: Segment[] = [];
  let previousSpace = true;
  for (const segment of segments) {
    let text = segment.text.replace(/\s+/g, ' ');
    if (previousSpace) {
      text = text.replace(/^ /, '');
    }
    if (text === '') {
      continue;
    }
    previousSpace = text.endsWith(' ');
    out.push({ text, marked: segment.marked });
  }
  const last = out[out.length - 1];
  if (last !== undefined) {
    last.text = last.text.replace(/ $/, '');
    if (last.text === '') {
      out.pop();
    }
  }
  return out;
}

/** The rendered segments, cut to `max` code points (counting the marks). */
function cut(segments: Segment[], max: number): string {
  const render = (s: Segment) => (s.marked ? `${MARK_OPEN}${s.text}${MARK_CLOSE}` : s.text);
  const full = segments.map(render).join('');
  if (Array.from(full).length <= max) {
    return full;
  }
  let out = '';
  let used = 0;
  const budget = max - 1; // room for the ellipsis
  for (const segment of segments) {
    const marks = segment.marked ? 2 : 0;
    const points = Array.from(segment.text);
    if (used + points.length + marks <= budget) {
      out += render(segment);
      used += points.length + marks;
      continue;
    }
    const room = budget - used - marks;
    if (room > 0) {
      // At a word boundary when there is one; a matched word is shown whole or not at all.
      let part = points.slice(0, room).join('');
      if (points[room] !== ' ') {
        const space = part.lastIndexOf(' ');
        if (segment.marked) {
          part = space > 0 ? part.slice(0, space) : '';
        } else if (space > room / 2) {
          part = part.slice(0, space);
        }
      }
      part = part.replace(/ $/, '');
      if (part !== '') {
        out += segment.marked ? `${MARK_OPEN}${part}${MARK_CLOSE}` : part;
      }
    }
    break;
  }
  return `${out.replace(/ $/, '')}…`;
}
