import { Highlight } from './protocol';

/**
 * The matched words of a snippet. The stable API cannot highlight parts of a QuickPick row
 * (QuickPickItem `highlights` is a proposed API that the extension host does not even pass on, and
 * the picker's own filter highlighting marks what the filter matched, not what the index matched),
 * so the picker shows the snippet as plain text and the words are highlighted where the API allows
 * it: in the previewed editor (decorations) and in the results view (TreeItemLabel highlights).
 * `markSnippet` (visible «marks») stays for plain-text uses such as logs.
 */
export const MARK_OPEN = '«';
export const MARK_CLOSE = '»';
/** Internal marks (private-use code points) from which `snippetLine` computes its ranges. */
const SENTINEL_OPEN = '\uE000';
const SENTINEL_CLOSE = '\uE001';

/** A snippet on one line and its matched words as `[start, end)` UTF-16 offsets into `text`. */
export interface SnippetLine {
  text: string;
  highlights: [number, number][];
}

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
  return escapeIcons(marked(Array.from(snippet), highlights, max, MARK_OPEN, MARK_CLOSE));
}

/**
 * `snippet` on one line, cut like `markSnippet`, with the matched words as UTF-16 ranges (what
 * TreeItemLabel highlights and editor ranges count) instead of marks. Icon syntax is not escaped:
 * callers that render `$(name)` escape `text` themselves.
 */
export function snippetLine(snippet: string, highlights: readonly Highlight[] | undefined, max: number): SnippetLine {
  // One code point for one, so the highlight ranges still fit.
  const points = Array.from(snippet).map((c) => (c === SENTINEL_OPEN || c === SENTINEL_CLOSE ? ' ' : c));
  let text = '';
  let start = -1;
  const ranges: [number, number][] = [];
  for (const c of marked(points, highlights, max, SENTINEL_OPEN, SENTINEL_CLOSE)) {
    if (c === SENTINEL_OPEN) {
      start = text.length;
    } else if (c === SENTINEL_CLOSE) {
      ranges.push([start, text.length]);
    } else {
      text += c;
    }
  }
  return { text, highlights: ranges };
}

function marked(points: string[], highlights: readonly Highlight[] | undefined, max: number, open: string, close: string): string {
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
  return cut(flatten(segments), max, open, close);
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
function cut(segments: Segment[], max: number, open: string, close: string): string {
  const render = (s: Segment) => (s.marked ? `${open}${s.text}${close}` : s.text);
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
        out += segment.marked ? `${open}${part}${close}` : part;
      }
    }
    break;
  }
  return `${out.replace(/ $/, '')}…`;
}
