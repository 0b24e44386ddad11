import * as vscode from 'vscode';
import { FiskApi } from './common/api';
import { onDidSearch, registerCommands, searchKnowledge } from './common/commands';
import { ServerCommands } from './common/constants';
import { createLog } from './common/log';
import { ShowResult } from './common/protocol';
import { FiskServer } from './common/server';
import { onDidChangePicker } from './common/search';
import { needsRestart } from './common/settings';
import { StatusBar } from './common/status';
import { registerKnowledgeTool } from './common/tool';

const RESTART_DELAY_MS = 300;
let server: FiskServer | undefined;
let restartTimer: ReturnType<typeof setTimeout> | undefined;

export function activate(context: vscode.ExtensionContext): FiskApi {
  const log = createLog();
  const fisk = new FiskServer(log);
  server = fisk;
  const status = new StatusBar(fisk);
  const tool = registerKnowledgeTool((args, token) => searchKnowledge(fisk, status, args, token));
  context.subscriptions.push(
    log,
    fisk,
    status,
    ...registerCommands(fisk, status),
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
    search: (query, topK, also, paths) => searchKnowledge(fisk, status, { query, topK, also, paths }),
    show: (citation) => fisk.request<ShowResult>(ServerCommands.show, { citation }),
    status: () => status.refresh(),
    get serverState() {
      return fisk.state;
    },
    onDidChangeServerState: fisk.onDidChangeState,
    onDidSearch,
    statusBar: { snapshot: () => status.snapshot(), onDidChange: status.onDidChange },
    searchPicker: { onDidChange: onDidChangePicker },
  };
}

export async function deactivate(): Promise<void> {
  await server?.stop();
  server = undefined;
}
