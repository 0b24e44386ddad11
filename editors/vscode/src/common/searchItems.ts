import * as vscode from 'vscode';
import { hitRange } from './citation';
import { errorMessage } from './log';
import { SearchHit, SearchResult, ServerNotRunningError } from './protocol';

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

export type PickItem = HitItem | NoticeItem;

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

export function hitItem(hit: SearchHit, copyButton: vscode.QuickInputButton): HitItem {
  return {
    label: `$(book) ${hit.section.trim() || relpathOf(hit.citation)}`,
    description: lineReference(hit),
    detail: oneLine(hit.snippet),
    alwaysShow: true,
    buttons: [copyButton],
    hit,
  };
}

export function noticeItem(notice: Notice): NoticeItem {
  return { label: notice.label, detail: notice.detail, alwaysShow: true, notice };
}

/** Why a search shows no results, or undefined when there are results to show. */
export function noticeFor(result: SearchResult, query: string): Notice | undefined {
  const degraded = result.degraded ? ` Search is degraded: ${result.reason ?? result.tier}.` : '';
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
      return { label: '$(info) Type words to search for', detail: `"${query}" has no searchable words.`, action: 'none' };
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

/** Title of the picker: the tier, with the reason when degraded. */
export function searchTitle(result?: SearchResult): string {
  if (result === undefined) {
    return SEARCH_TITLE;
  }
  if (result.degraded) {
    return `${SEARCH_TITLE} — ⚠ degraded: ${result.reason ?? result.tier}`;
  }
  return `${SEARCH_TITLE} — ${result.tier}`;
}
