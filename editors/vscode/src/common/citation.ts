import * as vscode from 'vscode';
import { LocationLink, LspRange } from './protocol';

/** A citation token inside text: `relpath#ordinal` without spaces, quotes or brackets. */
export const CITATION_PATTERN = /[^\s`'"<>()[\]{}|,;]+#\d+/;

/** Normalises user input to `relpath#ordinal` (the last `#` splits), or undefined when it is not one. */
export function parseCitation(input: string): string | undefined {
  const text = input.trim().replace(/^[`'"<([]+/, '').replace(/[`'">)\].,;:]+$/, '').trim();
  const hash = text.lastIndexOf('#');
  const relpath = text.slice(0, hash).trim();
  if (relpath === '' || /[\r\n]/.test(relpath) || !/^\d+$/.test(text.slice(hash + 1))) {
    return undefined;
  }
  return `${relpath}#${Number(text.slice(hash + 1))}`;
}

/** The citation to prefill: the selection, or the citation-looking token under the cursor, or ''. */
export function citationFromEditor(editor: vscode.TextEditor | undefined): string {
  if (editor === undefined) {
    return '';
  }
  const { document, selection } = editor;
  if (!selection.isEmpty) {
    return parseCitation(document.getText(selection)) ?? document.getText(selection).trim();
  }
  const range = document.getWordRangeAtPosition(selection.active, CITATION_PATTERN);
  return range === undefined ? '' : (parseCitation(document.getText(range)) ?? '');
}

/** First and last 0-based line of a chunk range whose end is exclusive at the start of the next line. */
export function citedLines(range: LspRange): { first: number; last: number } {
  const first = range.start.line;
  const endsAtLineStart = range.end.character === 0 && range.end.line > first;
  return { first, last: Math.max(first, endsAtLineStart ? range.end.line - 1 : range.end.line) };
}

/** The lines a search hit opens on: the part of the chunk that matched (docs/lsp-protocol.md), else the chunk. */
export function hitRange(link: LocationLink): LspRange {
  return link.targetSelectionRange ?? link.targetRange;
}

/**
 * Opens the cited file and selects from `range`'s start to the end of its last line (default: the whole
 * cited chunk), cursor at the start (line and character: a search hit's first matched word), and scrolls
 * them into view: `reveal` InCenter puts them in the middle of the editor (a search hit), the default
 * scrolls only when they are off screen (a citation). The server counts `character` in the position
 * encoding agreed at `initialize`; the language client offers only UTF-16, which is what
 * `vscode.Position` counts.
 */
export async function openLocation(
  link: LocationLink,
  range: LspRange = link.targetRange,
  reveal: vscode.TextEditorRevealType = vscode.TextEditorRevealType.InCenterIfOutsideViewport,
): Promise<vscode.TextEditor> {
  const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(link.targetUri));
  const { first, last } = citedLines(range);
  const lastLine = Math.min(last, document.lineCount - 1);
  const start = document.validatePosition(new vscode.Position(first, range.start.character));
  const end = document.lineAt(lastLine).range.end;
  const editor = await vscode.window.showTextDocument(document, { selection: new vscode.Range(start, end), preview: true });
  // The show option's range puts the cursor at its end; select backwards so the cursor is at the start.
  editor.selection = new vscode.Selection(end, start);
  editor.revealRange(new vscode.Range(start, end), reveal);
  return editor;
}

/** Opens a search hit (or another location of it): cursor on the first matched word, the matched lines selected and centred. */
export function openMatch(link: LocationLink): Promise<vscode.TextEditor> {
  return openLocation(link, hitRange(link), vscode.TextEditorRevealType.InCenter);
}
