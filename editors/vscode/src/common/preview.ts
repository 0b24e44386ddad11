import * as vscode from 'vscode';
import { citedLines, hitRange } from './citation';
import { SearchHit } from './protocol';

/** The matched words of a hit (its snippet's highlighted ranges, code points), each once, in order. */
export function matchedWords(hit: SearchHit): string[] {
  const points = Array.from(hit.snippet);
  const words: string[] = [];
  for (const range of hit.highlights ?? []) {
    if (!Array.isArray(range) || !Number.isInteger(range[0]) || !Number.isInteger(range[1]) || range[0] < 0 || range[1] > points.length) {
      continue;
    }
    const word = points.slice(range[0], range[1]).join('').trim();
    if (word !== '' && !words.some((w) => w.toLowerCase() === word.toLowerCase())) {
      words.push(word);
    }
  }
  return words;
}

/** Where `words` occur (any case) in `lines`, the first at `firstLine`: [line, start, end) in UTF-16 units. */
export function wordRanges(lines: readonly string[], firstLine: number, words: readonly string[]): [number, number, number][] {
  const found: [number, number, number][] = [];
  lines.forEach((text, i) => {
    const lower = text.toLowerCase();
    for (const word of words) {
      const needle = word.toLowerCase();
      for (let at = lower.indexOf(needle); at >= 0; at = lower.indexOf(needle, at + needle.length)) {
        found.push([firstLine + i, at, at + needle.length]);
      }
    }
  });
  return found.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
}

/**
 * Previews the focused search row in an editor as Go to Symbol does: the hit's file in the preview
 * tab (one tab, reused row after row), the focus left in the picker, the matched lines selected and
 * centred, the matched words highlighted. When the picker closes without opening anything, the tab a
 * preview opened is closed and the editor that was active comes back with its selection.
 */
export class SearchPreview implements vscode.Disposable {
  private readonly decoration = vscode.window.createTextEditorDecorationType({
    backgroundColor: new vscode.ThemeColor('editor.findMatchHighlightBackground'),
    borderColor: new vscode.ThemeColor('editor.findMatchHighlightBorder'),
    borderStyle: 'solid',
    borderWidth: '1px',
  });
  private before: { editor: vscode.TextEditor; selection: vscode.Selection } | undefined;
  private openBefore: Set<string> | undefined;
  private previewed: vscode.TextEditor | undefined;
  private shown = 0;

  /** Shows `hit`; a later call overtakes an earlier one still opening. */
  async preview(hit: SearchHit): Promise<vscode.TextEditor | undefined> {
    if (this.openBefore === undefined) {
      const editor = vscode.window.activeTextEditor;
      this.before = editor === undefined ? undefined : { editor, selection: editor.selection };
      this.openBefore = openUris();
    }
    const mine = ++this.shown;
    const document = await vscode.workspace.openTextDocument(vscode.Uri.parse(hit.location.targetUri));
    if (mine !== this.shown) {
      return undefined;
    }
    const range = hitRange(hit.location);
    const { first, last } = citedLines(range);
    const lastLine = Math.min(last, document.lineCount - 1);
    const start = document.validatePosition(new vscode.Position(first, range.start.character));
    const selection = new vscode.Range(start, document.lineAt(lastLine).range.end);
    const editor = await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      selection,
      viewColumn: this.before?.editor.viewColumn,
    });
    // As an opened hit: the matched lines selected, the cursor on the first matched word.
    editor.selection = new vscode.Selection(selection.end, selection.start);
    editor.revealRange(selection, vscode.TextEditorRevealType.InCenter);
    if (this.previewed !== undefined && this.previewed !== editor) {
      this.previewed.setDecorations(this.decoration, []);
    }
    this.previewed = editor;
    const lines: string[] = [];
    for (let line = first; line <= lastLine; line++) {
      lines.push(document.lineAt(line).text);
    }
    editor.setDecorations(
      this.decoration,
      wordRanges(lines, first, matchedWords(hit)).map(([line, from, to]) => new vscode.Range(line, from, line, to)),
    );
    return editor;
  }

  /** The picker closed: `accepted` keeps what it opened; otherwise the editor from before comes back. */
  async end(accepted: boolean): Promise<void> {
    const { before, openBefore, previewed } = this;
    this.before = undefined;
    this.openBefore = undefined;
    this.previewed = undefined;
    this.shown++;
    if (openBefore === undefined || accepted) {
      return;
    }
    previewed?.setDecorations(this.decoration, []);
    const stray = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.isPreview && tab.input instanceof vscode.TabInputText && !openBefore.has(tab.input.uri.toString()));
    if (stray.length > 0) {
      await vscode.window.tabGroups.close(stray, true);
    }
    if (before !== undefined) {
      const editor = await vscode.window.showTextDocument(before.editor.document, { viewColumn: before.editor.viewColumn, selection: before.selection });
      editor.revealRange(before.selection, vscode.TextEditorRevealType.InCenterIfOutsideViewport);
    }
  }

  dispose(): void {
    this.decoration.dispose();
  }
}

function openUris(): Set<string> {
  const uris = new Set<string>();
  for (const tab of vscode.window.tabGroups.all.flatMap((group) => group.tabs)) {
    if (tab.input instanceof vscode.TabInputText) {
      uris.add(tab.input.uri.toString());
    }
  }
  return uris;
}
