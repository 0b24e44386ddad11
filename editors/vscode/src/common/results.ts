import * as vscode from 'vscode';
import { hitRange } from './citation';
import { SearchHit } from './protocol';
import type { KeptList } from './search';
import { lineReference, oneLine, relpathOf, SNIPPET_LENGTH, tierName } from './searchItems';
import { snippetLine } from './snippet';

/** Not `fisk.…`: VS Code adds commands named after the view (`<id>.focus`), and `fisk.*` are the contributed commands. */
export const RESULTS_VIEW = 'fiskResults';
/** Context key: the results view holds a list (its welcome text shows otherwise). */
export const RESULTS_CONTEXT = 'fisk.hasResults';

/** A ranked hit, or the matched line under it (the snippet, its matched words highlighted). */
export type ResultNode = { kind: 'hit'; hit: SearchHit; rank: number } | { kind: 'line'; hit: SearchHit };

/** The view's one-line message for a kept list. */
export function resultsMessage(list: KeptList): string {
  const n = list.result.results.length;
  const what = [`"${oneLine(list.query, 60)}"`, ...list.tags.map((t) => `tag:${t}`)].join(' ');
  const where = list.paths.length > 0 ? ` in ${list.paths.join(', ')}` : '';
  return `${n} ${n === 1 ? 'result' : 'results'} for ${what}${where} (${tierName(list.result.tier)}), best first`;
}

/**
 * The Fisk Results view: the last kept search as the Search view shows matches, in the server's
 * order. Each hit is its section with `relpath:line`; under it the matched line with the matched
 * words highlighted (TreeItemLabel highlights, stable API). Selecting either opens the hit.
 */
export class ResultsView implements vscode.TreeDataProvider<ResultNode>, vscode.Disposable {
  private list: KeptList | undefined;
  private readonly changed = new vscode.EventEmitter<ResultNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly view: vscode.TreeView<ResultNode>;

  constructor(private readonly openCommand: string) {
    this.view = vscode.window.createTreeView(RESULTS_VIEW, { treeDataProvider: this, showCollapseAll: true });
  }

  /** The list shown (the integration tests read it). */
  get current(): KeptList | undefined {
    return this.list;
  }

  /** Shows `list` and reveals the view on its first hit. */
  async show(list: KeptList): Promise<void> {
    this.list = list;
    this.view.message = resultsMessage(list);
    void vscode.commands.executeCommand('setContext', RESULTS_CONTEXT, true);
    this.changed.fire(undefined);
    const first = this.getChildren()[0];
    if (first !== undefined) {
      await this.view.reveal(first, { focus: false, select: false, expand: true }).then(undefined, () => undefined);
    }
  }

  clear(): void {
    this.list = undefined;
    this.view.message = undefined;
    void vscode.commands.executeCommand('setContext', RESULTS_CONTEXT, false);
    this.changed.fire(undefined);
  }

  getChildren(node?: ResultNode): ResultNode[] {
    if (node === undefined) {
      return (this.list?.result.results ?? []).map((hit, i) => ({ kind: 'hit', hit, rank: i + 1 }));
    }
    return node.kind === 'hit' ? [{ kind: 'line', hit: node.hit }] : [];
  }

  getParent(node: ResultNode): ResultNode | undefined {
    if (node.kind === 'hit') {
      return undefined;
    }
    return this.getChildren().find((n) => n.kind === 'hit' && n.hit === node.hit);
  }

  getTreeItem(node: ResultNode): vscode.TreeItem {
    return resultItem(node, this.openCommand);
  }

  dispose(): void {
    this.view.dispose();
    this.changed.dispose();
  }
}

export function resultItem(node: ResultNode, openCommand: string): vscode.TreeItem {
  const { hit } = node;
  const command: vscode.Command = { command: openCommand, title: 'Open', arguments: [hit] };
  if (node.kind === 'hit') {
    const item = new vscode.TreeItem(`${node.rank}. ${hit.section.trim() || relpathOf(hit.citation)}`, vscode.TreeItemCollapsibleState.Expanded);
    item.description = lineReference(hit);
    item.tooltip = `${hit.citation} (score ${hit.score.toFixed(3)})`;
    item.resourceUri = vscode.Uri.parse(hit.location.targetUri);
    item.iconPath = vscode.ThemeIcon.File;
    item.id = `hit:${hit.citation}`;
    item.command = command;
    return item;
  }
  const line = snippetLine(hit.snippet, hit.highlights, SNIPPET_LENGTH);
  const item = new vscode.TreeItem({ label: line.text || hit.citation, highlights: line.highlights }, vscode.TreeItemCollapsibleState.None);
  item.id = `line:${hit.citation}`;
  item.tooltip = `${lineReference(hit)}: line ${hitRange(hit.location).start.line + 1}`;
  item.command = command;
  return item;
}
