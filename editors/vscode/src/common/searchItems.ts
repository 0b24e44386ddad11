import * as vscode from 'vscode';
import { hitRange } from './citation';
import { errorMessage } from './log';
import { expanded, LocationLink, OtherLocation, SearchHit, SearchResult, ServerNotRunningError } from './protocol';
import { escapeIcons, snippetLine } from './snippet';

/** What accepting a notice row does. */
export type NoticeAction = 'reindex' | 'openSettings' | 'showLog' | 'restartServer' | 'none';

export interface Notice {
  label: string;
  detail: string;
  action: NoticeAction;
}

export interface HitItem extends vscode.QuickPickItem {
  hit: SearchHit;
}

export interface NoticeItem extends vscode.QuickPickItem {
  notice: Notice;
}

/** The "more results" row: accepting it asks for `topK` results (the picker stays open). */
export interface MoreItem extends vscode.QuickPickItem {
  more: number;
}

export type PickItem = HitItem | NoticeItem | MoreItem;

/** The most results one search returns: the server's limit for `topK` (package.json's `fisk.topK` maximum; a unit test keeps them equal). */
export const MAX_RESULTS = 20;

/** The "more results" row after `shown` results, asking for `step` more (up to MAX_RESULTS). */
export function moreItem(shown: number, step: number): MoreItem {
  const more = Math.min(MAX_RESULTS, shown + Math.max(1, step));
  return {
    label: '$(more) More results',
    detail: `Show up to ${more} results (${shown} shown)`,
    alwaysShow: true,
    more,
  };
}

/** A typed query split into its words and its `tag:NAME` filters (the search's `tags`). */
export interface ParsedQuery {
  query: string;
  tags: string[];
}

const TAG_TOKEN = /^tag:(\S+)$/i;

/** `retry tag:otel backoff tag:#sdk` → query "retry backoff", tags ["otel", "#sdk"] (the server drops a leading `#`). */
export function parseQuery(value: string): ParsedQuery {
  const words: string[] = [];
  const tags: string[] = [];
  for (const token of value.split(/\s+/).filter(Boolean)) {
    const tag = TAG_TOKEN.exec(token);
    if (tag !== null) {
      if (!tags.includes(tag[1])) {
        tags.push(tag[1]);
      }
    } else {
      words.push(token);
    }
  }
  return { query: words.join(' '), tags };
}

/** An item button and what it does. */
export interface HitButton extends vscode.QuickInputButton {
  action: 'copy' | 'copies';
}

/** A row of the "also in N files" pick: one other location of a result. */
export interface OtherItem extends vscode.QuickPickItem {
  citation: string;
  location: LocationLink;
}

export const SNIPPET_LENGTH = 160;
export const SEARCH_TITLE = 'Fisk: Search Knowledge';

/** `docs/a#b.md#3` → `docs/a#b.md` (the last `#` splits). */
export function relpathOf(citation: string): string {
  const hash = citation.lastIndexOf('#');
  return hash < 0 ? citation : citation.slice(0, hash);
}

/** `relpath:line`, 1-based, of the first cited line. */
export function lineReference(hit: SearchHit): string {
  return `${relpathOf(hit.citation)}:${hitRange(hit.location).start.line + 1}`;
}

/** The snippet on one line, shortened at a word boundary. */
export function oneLine(text: string, max = SNIPPET_LENGTH): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) {
    return flat;
  }
  const cut = flat.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return `${space > max / 2 ? cut.slice(0, space) : cut}…`;
}

/**
 * A result row: its section, `relpath:line` of the matched lines (and how many other files hold the
 * same text), and the snippet around the match as plain text (the matched words are highlighted in
 * the preview and the results view; see snippet.ts for why not here). Buttons: the other locations
 * (when there are any), then copy citation.
 */
export function hitItem(hit: SearchHit, copyButton: HitButton): HitItem {
  const copies = copiesText(hit);
  const buttons: HitButton[] = copies ? [{ iconPath: new vscode.ThemeIcon('files'), tooltip: capitalised(copies), action: 'copies' }, copyButton] : [copyButton];
  return {
    label: `$(book) ${escapeIcons(hit.section.trim() || relpathOf(hit.citation))}`,
    description: escapeIcons(lineReference(hit)) + (copies ? ` · ${copies}` : ''),
    detail: escapeIcons(snippetLine(hit.snippet, hit.highlights, SNIPPET_LENGTH).text),
    alwaysShow: true,
    buttons,
    hit,
  };
}

/** The other copies of a result's text: `copies`, or `also` from a server older than the rename. */
export function copiesOf(hit: SearchHit): OtherLocation[] {
  return hit.copies ?? hit.also ?? [];
}

/** "also in 3 files" (or "in 2 more places" when a copy is in the result's own file); undefined without copies. */
export function copiesText(hit: SearchHit): string | undefined {
  const copies = copiesOf(hit);
  if (copies.length === 0) {
    return undefined;
  }
  const own = relpathOf(hit.citation);
  const files = new Set(copies.map((other) => relpathOf(other.citation)));
  if (files.size === copies.length && !files.has(own)) {
    return `also in ${files.size} ${files.size === 1 ? 'file' : 'files'}`;
  }
  return `in ${copies.length} more ${copies.length === 1 ? 'place' : 'places'}`;
}

function capitalised(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The rows of the "also in N files" pick: `relpath:line` of each copy's matched lines, best first. */
export function otherItems(hit: SearchHit): OtherItem[] {
  return copiesOf(hit).map((other) => ({
    label: `$(file) ${escapeIcons(relpathOf(other.citation))}`,
    description: `line ${hitRange(other.location).start.line + 1}`,
    citation: other.citation,
    location: other.location,
  }));
}

/** Title of the "also in N files" pick. */
export function otherTitle(hit: SearchHit): string {
  return `Fisk: ${hit.section.trim() || relpathOf(hit.citation)}, ${copiesText(hit) ?? 'no other locations'}`;
}

export function noticeItem(notice: Notice): NoticeItem {
  return { label: notice.label, detail: notice.detail, alwaysShow: true, notice };
}

/** Why a search shows no results, or undefined when there are results to show. */
export function noticeFor(result: SearchResult, query: string): Notice | undefined {
  const degraded = result.degraded ? ` Search is degraded: ${result.reason ?? result.tier}.` : '';
  if (result.indexing && result.note && (result.status !== 'ok' || result.results.length === 0) && result.status !== 'no_terms') {
    // Nothing (or nothing matching) yet while the first index run goes on: say how far it got.
    return { label: '$(sync~spin) Still indexing', detail: `${result.note}.${degraded}`, action: 'none' };
  }
  switch (result.status) {
    case 'index_not_built':
      return {
        label: '$(warning) The index has not been built yet',
        detail: `Press Enter to run "Fisk: Reindex Workspace".${degraded}`,
        action: 'reindex',
      };
    case 'index_empty':
      return {
        label: '$(warning) The index is empty',
        detail: `No markdown or text files were found; check "fisk.paths". Press Enter to open the setting.${degraded}`,
        action: 'openSettings',
      };
    case 'no_terms':
      return { label: '$(info) Type words to search for', detail: `"${query}" has no words to search for.`, action: 'none' };
    case 'ok':
      if (result.results.length > 0) {
        return undefined;
      }
      return { label: `$(info) No matches for "${query}"`, detail: `Try other words.${degraded}`, action: 'none' };
  }
  return { label: `$(warning) Unexpected search status "${String(result.status)}"`, detail: result.tier, action: 'showLog' };
}

/** The row shown when the request failed: server not running, or an error from the server. */
export function failureNotice(error: unknown): Notice {
  if (error instanceof ServerNotRunningError) {
    return {
      label: '$(error) The Fisk server is not running',
      detail: error.message,
      action: error.state === 'missing' ? 'openSettings' : 'restartServer',
    };
  }
  return { label: '$(error) Search failed', detail: `${errorMessage(error)} (press Enter to show the log)`, action: 'showLog' };
}

/** Title of the picker: the scope (a folder's label) when there is one, then the tier, with the reason when degraded. */
export function searchTitle(result?: SearchResult, scope?: string, tags: readonly string[] = []): string {
  const scoped = scope === undefined ? SEARCH_TITLE : `${SEARCH_TITLE} in ${scope}`;
  const title = tags.length === 0 ? scoped : `${scoped} [${tags.map((t) => `tag:${t}`).join(' ')}]`;
  if (result === undefined) {
    return title;
  }
  const tier = result.degraded ? `${title} — ⚠ degraded: ${result.reason ?? result.tier}` : `${title} — ${tierName(result.tier)}`;
  const note = expansionNote(result);
  return note === undefined ? tier : `${tier} · ${note}`;
}

/**
 * The tier in a few words: "lexical" or "hybrid (model, 384d)", without the server's parenthesis
 * on why a lexical index is lexical (the status bar and "Show Index Status" have it).
 */
export function tierName(tier: string): string {
  return /^lexical\b/i.test(tier) ? 'lexical' : tier.split(';')[0].trim();
}

/** What the language model did for the list, in the title's words; undefined when there is nothing to say. */
export function expansionNote(result: SearchResult): string | undefined {
  if (expanded(result)) {
    return 'expanded by the language model';
  }
  const failed = /^failed: (.*)$/s.exec(result.expansion ?? '');
  return failed ? `not expanded (${oneLine(failed[1], 80)})` : undefined;
}

/** The picker's placeholder: what it searches. */
export function searchPlaceholder(scope?: string): string {
  return scope === undefined ? 'Search the workspace docs (tag:NAME keeps to tagged pages)' : `Search the docs in ${scope} (tag:NAME keeps to tagged pages)`;
}
