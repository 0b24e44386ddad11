import * as path from 'node:path';
import * as vscode from 'vscode';
import { citationFromEditor, openLocation, openMatch, parseCitation } from './citation';
import { Commands, INSTALL_COMMAND, ServerCommands } from './constants';
import { languageModels } from './expand';
import { errorMessage, getLog, logError, logInfo } from './log';
import { IndexStatus, ReindexResult, SearchArgs, SearchHit, SearchResult, ServerNotRunningError, ShowResult } from './protocol';
import { SearchPreview } from './preview';
import { ResultsView } from './results';
import { SemanticOffer } from './semantic';
import { folderScope, SearchPicker, SearchScope } from './search';
import { Notice, otherItems, otherTitle } from './searchItems';
import { FiskServer } from './server';
import { DEFAULT_TOP_K, expansionOn, getSettings } from './settings';
import { StatusBar, statusLines } from './status';

/** Registers every contributed command. Each one talks to the server through `workspace/executeCommand`. */
/** What the commands show besides the picker: the results view, the editor preview, the semantic search offer. */
export interface CommandViews {
  results: ResultsView;
  preview: SearchPreview;
  semantic: SemanticOffer;
}

export function registerCommands(server: FiskServer, status: StatusBar, views: CommandViews): vscode.Disposable[] {
  const { results, preview, semantic } = views;
  const picker = new SearchPicker({
    search: (args, token) => searchKnowledge(server, status, args, token),
    // A query typed in the picker is searched again with `expand: true` when expansion is configured.
    expands: () => expansionAvailable(),
    // A search hit opens on the part that matched; a citation (Open Citation) selects its whole chunk.
    open: (hit: SearchHit) => guarded(() => openMatch(hit.location)),
    openAlso: (hit: SearchHit) => guarded(() => openAlso(hit)),
    copy: (citation) => copyCitation(citation),
    act: async (notice) => runNotice(notice),
    // The focused row is shown in the editor as Go to Symbol does; a cancelled pick puts the editor back.
    preview: (hit) => preview.preview(hit),
    endPreview: (accepted) => preview.end(accepted),
    keep: (list) => void results.show(list),
    pageSize: () => pageSize(getSettings().topK),
  });
  return [
    // The scope toggle offers the active file's folder; Search in Folder… starts in the folder given.
    vscode.commands.registerCommand(Commands.search, async (query?: unknown) =>
      picker.show(typeof query === 'string' ? query : selectedText(vscode.window.activeTextEditor), {
        scope: editorFolder(vscode.window.activeTextEditor),
      }),
    ),
    vscode.commands.registerCommand(Commands.searchKeep, async (query?: unknown) =>
      picker.show(typeof query === 'string' ? query : selectedText(vscode.window.activeTextEditor), {
        scope: editorFolder(vscode.window.activeTextEditor),
        keep: true,
      }),
    ),
    vscode.commands.registerCommand(Commands.openResult, (hit?: unknown) => guarded(() => openMatch(asHit(hit).location))),
    vscode.commands.registerCommand(Commands.clearResults, () => results.clear()),
    vscode.commands.registerCommand(Commands.enableSemanticSearch, () => guarded(() => semantic.enable())),
    vscode.commands.registerCommand(Commands.searchInFolder, async (folder?: unknown) => {
      const scope = folder instanceof vscode.Uri ? folderScope(folder) : editorFolder(vscode.window.activeTextEditor);
      if (scope === undefined) {
        const what = folder instanceof vscode.Uri ? folder.fsPath : 'The active editor';
        void vscode.window.showErrorMessage(`Fisk: ${what} is not in a workspace folder; Search in Folder searches the folders of the workspace.`);
        return undefined;
      }
      return picker.show(selectedText(vscode.window.activeTextEditor), { scope, scoped: true });
    }),
    vscode.commands.registerCommand(Commands.toggleSearchScope, () => picker.toggleScope()),
    vscode.commands.registerCommand(Commands.openAlso, (hit?: unknown) => guarded(() => openAlso(asHit(hit)))),
    vscode.commands.registerCommand(Commands.openCitation, (citation?: unknown) =>
      guarded(() => openCitation(server, typeof citation === 'string' ? citation : undefined)),
    ),
    vscode.commands.registerCommand(Commands.reindex, () => guarded(() => reindex(server, status, false))),
    vscode.commands.registerCommand(Commands.rebuild, () => guarded(() => reindex(server, status, true))),
    vscode.commands.registerCommand(Commands.showStatus, () => guarded(() => showStatus(server, status))),
    vscode.commands.registerCommand(Commands.restartServer, () => server.restart()),
    vscode.commands.registerCommand(Commands.showLog, () => getLog()?.show()),
  ];
}

/**
 * How many results "more results" adds: `fisk.topK` as set, else the server's default. A value the
 * server refused (it named it in its settings message) still only sizes the step.
 */
export function pageSize(topK: unknown): number {
  return typeof topK === 'number' ? topK : DEFAULT_TOP_K;
}

/** Every search request and how it ended (FiskApi.onDidSearch). */
export interface SearchEvent {
  args: SearchArgs;
  result?: SearchResult;
  error?: unknown;
}
const searched = new vscode.EventEmitter<SearchEvent>();
export const onDidSearch: vscode.Event<SearchEvent> = searched.event;

/** `fisk.knowledge.search`, used by the picker, the language model tool and the API; the status bar sees each result. */
export async function searchKnowledge(server: FiskServer, status: StatusBar, args: SearchArgs, token?: vscode.CancellationToken): Promise<SearchResult> {
  // topK, also and paths only when given: without topK the server's configured number of results applies.
  const sent: SearchArgs = { query: args.query };
  if (args.topK !== undefined) {
    sent.topK = args.topK;
  }
  if (args.also !== undefined && !(Array.isArray(args.also) && args.also.length === 0)) {
    sent.also = args.also;
  }
  if (args.paths !== undefined && args.paths.length > 0) {
    sent.paths = args.paths;
  }
  if (args.tags !== undefined && args.tags.length > 0) {
    sent.tags = args.tags;
  }
  if (args.expand === true) {
    sent.expand = true;
  }
  let result: SearchResult;
  try {
    result = await server.request<SearchResult>(ServerCommands.search, sent, token);
  } catch (error) {
    searched.fire({ args: sent, error });
    throw error;
  }
  status.noteSearch(result);
  searched.fire({ args: sent, result });
  return result;
}

/**
 * Whether the picker asks for expansion: a provider other than none, and for `editor` a chat model
 * that VS Code offers now (without one every search would only fail to expand).
 */
export async function expansionAvailable(): Promise<boolean> {
  const settings = getSettings();
  if (!expansionOn(settings)) {
    return false;
  }
  if (settings.expansion.provider !== 'editor') {
    return true;
  }
  try {
    return ((await languageModels()?.selectChatModels()) ?? []).length > 0;
  } catch {
    return false;
  }
}

/** The folder of the active editor's file, when it is in a workspace folder. */
export function editorFolder(editor: vscode.TextEditor | undefined): SearchScope | undefined {
  const uri = editor?.document.uri;
  return uri?.scheme === 'file' ? folderScope(vscode.Uri.file(path.dirname(uri.fsPath))) : undefined;
}

/** A short one-line selection becomes the initial query. */
export function selectedText(editor: vscode.TextEditor | undefined): string {
  if (editor === undefined || editor.selection.isEmpty) {
    return '';
  }
  const text = editor.document.getText(editor.selection).trim();
  return text.length <= 200 && !text.includes('\n') ? text : '';
}

/** The other locations of a hit (near-identical copies) in a pick; opens the chosen one on its matched lines. */
async function openAlso(hit: SearchHit): Promise<string | undefined> {
  const items = otherItems(hit);
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`Fisk: ${hit.citation} has no other locations.`);
    return undefined;
  }
  const choice = await vscode.window.showQuickPick(items, { title: otherTitle(hit), placeHolder: 'Open another copy of this result' });
  if (choice === undefined) {
    return undefined;
  }
  await openMatch(choice.location);
  return choice.citation;
}

function asHit(value: unknown): SearchHit {
  const hit = value as Partial<SearchHit> | undefined;
  if (typeof hit?.citation !== 'string' || typeof hit.section !== 'string' || !Array.isArray(hit.copies ?? hit.also ?? [])) {
    throw new Error('fisk.openAlso expects a search result (from fisk.knowledge.search) as its argument');
  }
  return hit as SearchHit;
}

async function openCitation(server: FiskServer, given?: string): Promise<ShowResult | undefined> {
  const input =
    given ??
    (await vscode.window.showInputBox({
      title: 'Fisk: Open Citation',
      prompt: 'A citation as relpath#ordinal, for example docs/install.md#2',
      value: citationFromEditor(vscode.window.activeTextEditor),
      validateInput: (value) => (parseCitation(value) ? undefined : 'Expected relpath#ordinal, for example docs/install.md#2'),
    }));
  if (input === undefined) {
    return undefined;
  }
  const citation = parseCitation(input);
  if (citation === undefined) {
    throw new Error(`"${input}" is not a citation; expected relpath#ordinal, for example docs/install.md#2`);
  }
  const shown = await server.request<ShowResult>(ServerCommands.show, { citation });
  await openLocation(shown.location);
  if (shown.stale) {
    void vscode.window.showWarningMessage(
      `Fisk: ${citation} changed since it was indexed; the cited lines may have moved. Run "Fisk: Reindex Workspace".`,
    );
  }
  return shown;
}

async function reindex(server: FiskServer, status: StatusBar, rebuild: boolean): Promise<ReindexResult> {
  const title = rebuild ? 'Fisk: rebuilding the index…' : 'Fisk: reindexing the workspace…';
  const result = await vscode.window.withProgress({ location: vscode.ProgressLocation.Notification, title }, () =>
    server.request<ReindexResult>(ServerCommands.reindex, { rebuild }),
  );
  const summary =
    `${result.files} files: ${result.added} added, ${result.updated} updated, ${result.skipped} unchanged, ` +
    `${result.removed} removed; ${result.chunks} chunks.`;
  logInfo(`${rebuild ? 'rebuild' : 'reindex'}: ${summary}`);
  await status.refresh();
  void vscode.window.showInformationMessage(`Fisk: ${rebuild ? 'rebuilt' : 'reindexed'} ${summary}`);
  return result;
}

async function showStatus(server: FiskServer, status: StatusBar): Promise<IndexStatus | undefined> {
  if (server.state.kind !== 'running') {
    throw new ServerNotRunningError(server.describe(), server.state.kind);
  }
  const result = await status.refresh();
  if (result === undefined) {
    throw new Error('the server did not answer fisk.knowledge.status; see "Fisk: Show Log"');
  }
  const lines = statusLines(result);
  lines.forEach((line) => logInfo(line));
  const documents = result.roots.reduce((n, r) => n + r.documents, 0);
  const chunks = result.roots.reduce((n, r) => n + r.chunks, 0);
  const summary = `${result.tier}; ${documents} documents, ${chunks} chunks${result.indexing ? '; indexing…' : ''}.`;
  void vscode.window.showInformationMessage(`Fisk: ${summary}`, 'Reindex', 'Show Log').then((choice) => {
    if (choice === 'Reindex') {
      void vscode.commands.executeCommand(Commands.reindex);
    } else if (choice === 'Show Log') {
      getLog()?.show();
    }
  });
  return result;
}

async function copyCitation(citation: string): Promise<void> {
  await vscode.env.clipboard.writeText(citation);
  vscode.window.setStatusBarMessage(`Fisk: copied ${citation}`, 3000);
}

function runNotice(notice: Notice): Thenable<unknown> {
  switch (notice.action) {
    case 'reindex':
      return vscode.commands.executeCommand(Commands.reindex);
    case 'openSettings':
      return vscode.commands.executeCommand('workbench.action.openSettings', 'fisk.');
    case 'showLog':
      return vscode.commands.executeCommand(Commands.showLog);
    case 'restartServer':
      return vscode.commands.executeCommand(Commands.restartServer);
    case 'none':
      return Promise.resolve();
  }
}

/** Runs a command body; a failure becomes one error message (with the install command when the server is missing). */
async function guarded<T>(body: () => Promise<T>): Promise<T | undefined> {
  try {
    return await body();
  } catch (error) {
    logError('command failed', error);
    const message = errorMessage(error);
    if (error instanceof ServerNotRunningError && error.state === 'missing') {
      const copy = 'Copy Install Command';
      void vscode.window.showErrorMessage(`Fisk: ${message}`, copy).then((choice) => {
        if (choice === copy) {
          void vscode.env.clipboard.writeText(INSTALL_COMMAND);
        }
      });
    } else {
      void vscode.window.showErrorMessage(`Fisk: ${message}`);
    }
    return undefined;
  }
}
