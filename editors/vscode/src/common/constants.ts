/** Identifiers shared by package.json contributions and the code. One word per idea. */

export const EXTENSION_ID = 'fisk.fisk-ls';
export const CLIENT_ID = 'fisk';
export const CLIENT_NAME = 'Fisk';
export const SETTINGS_SECTION = 'fisk';
export const DEFAULT_SERVER_COMMAND = 'fisk-ls';
export const INSTALL_COMMAND = 'pip install fisk-ls';
export const TOOL_NAME = 'fisk_knowledge_search';
export const PROGRESS_TITLE = 'Indexing docs';

/** Commands this extension contributes (package.json `contributes.commands`). */
export const Commands = {
  search: 'fisk.search',
  openCitation: 'fisk.openCitation',
  reindex: 'fisk.reindex',
  rebuild: 'fisk.rebuild',
  showStatus: 'fisk.showStatus',
  restartServer: 'fisk.restartServer',
  showLog: 'fisk.showLog',
} as const;

/** `workspace/executeCommand` commands the server implements (docs/lsp-protocol.md). */
export const ServerCommands = {
  search: 'fisk.knowledge.search',
  show: 'fisk.knowledge.show',
  reindex: 'fisk.knowledge.reindex',
  status: 'fisk.knowledge.status',
} as const;
