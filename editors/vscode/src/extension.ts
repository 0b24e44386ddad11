import * as vscode from 'vscode';
import { FiskApi } from './common/api';
import { onDidSearch, registerCommands, searchKnowledge } from './common/commands';
import { Commands, ServerCommands } from './common/constants';
import { createLog } from './common/log';
import { SearchPreview } from './common/preview';
import { ShowResult } from './common/protocol';
import { ResultsView } from './common/results';
import { FiskServer } from './common/server';
import { onDidChangePicker } from './common/search';
import { SemanticOffer } from './common/semantic';
import { needsRestart } from './common/settings';
import { ServerSetup } from './common/setup';
import { StatusBar } from './common/status';
import { registerKnowledgeTool } from './common/tool';

const RESTART_DELAY_MS = 300;
let server: FiskServer | undefined;
let restartTimer: ReturnType<typeof setTimeout> | undefined;

export function activate(context: vscode.ExtensionContext): FiskApi {
  const log = createLog();
  const setup = new ServerSetup(context.extensionUri.fsPath, context.globalStorageUri.fsPath);
  const fisk = new FiskServer(log, undefined, () => setup.ensure());
  server = fisk;
  const status = new StatusBar(fisk);
  const results = new ResultsView(Commands.openResult);
  const preview = new SearchPreview();
  const semantic = new SemanticOffer(context.workspaceState, () => fisk.serverExecutable);
  const tool = registerKnowledgeTool((args, token) => searchKnowledge(fisk, status, args, token));
  context.subscriptions.push(
    log,
    fisk,
    status,
    results,
    preview,
    semantic,
    ...registerCommands(fisk, status, { results, preview, semantic }),
    status.onDidRefresh((index) => void semantic.consider(index)),
    ...(tool ? [tool] : []),
    vscode.workspace.onDidChangeConfiguration((event) => {
      if (needsRestart(event)) {
        // Typing in the settings editor changes a value per keystroke: restart once it settles.
        clearTimeout(restartTimer);
        restartTimer = setTimeout(() => void fisk.restart(), RESTART_DELAY_MS);
      }
    }),
    { dispose: () => clearTimeout(restartTimer) },
  );
  void fisk.restart();
  return {
    search: (query, topK, also, paths, tags) => searchKnowledge(fisk, status, { query, topK, also, paths, tags }),
    show: (citation) => fisk.request<ShowResult>(ServerCommands.show, { citation }),
    status: () => status.refresh(),
    get serverState() {
      return fisk.state;
    },
    get serverExecutable() {
      return fisk.serverExecutable;
    },
    serverEnvironment: setup.environment.dir,
    onDidChangeServerState: fisk.onDidChangeState,
    onDidShowServerMessage: fisk.onDidShowMessage,
    onDidSearch,
    statusBar: { snapshot: () => status.snapshot(), onDidChange: status.onDidChange },
    searchPicker: { onDidChange: onDidChangePicker },
    results: { current: () => results.current },
    semanticSearch: {
      offered: () => semantic.offered,
      onDidOffer: semantic.onDidOffer,
      onDidEnable: semantic.onDidEnable,
    },
  };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
