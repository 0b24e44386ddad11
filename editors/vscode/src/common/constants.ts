/** Identifiers shared by package.json contributions and the code. One word per idea. */

export const EXTENSION_ID = 'fisk.fisk-ls';
export const CLIENT_ID = 'fisk';
export const CLIENT_NAME = 'Fisk';
export const SETTINGS_SECTION = 'fisk';
export const DEFAULT_SERVER_COMMAND = 'fisk-ls';
/**
 * fisk-ls is not on PyPI yet, so the install command that works is the one run in a checkout of the
 * repository (as in the main README's Install section); `pipx install fisk-ls` once the package is published.
 */
export const INSTALL_COMMAND = 'pipx install --force .';
export const INSTALL_HINT = `\`${INSTALL_COMMAND}\` in a checkout of the fisk-ls repository (\`pipx install fisk-ls\` once it is published)`;
export const TOOL_NAME = 'fisk_knowledge_search';
export const PROGRESS_TITLE = 'Indexing docs';

/** Commands this extension contributes (package.json `contributes.commands`). */
export const Commands = {
  search: 'fisk.search',
  /** The same picker; accepting a row also keeps the list in the Fisk Results view. */
  searchKeep: 'fisk.searchKeep',
  /** Hidden from the palette: a results view row (argument: the SearchHit). */
  openResult: 'fisk.openResult',
  clearResults: 'fisk.clearResults',
  enableSemanticSearch: 'fisk.enableSemanticSearch',
  /** The explorer's context menu on a folder (argument: its Uri): the picker kept to that folder. */
  searchInFolder: 'fisk.searchInFolder',
  /** The search picker's scope button: the whole workspace or the folder (hidden from the palette). */
  toggleSearchScope: 'fisk.toggleSearchScope',
  openCitation: 'fisk.openCitation',
  reindex: 'fisk.reindex',
  rebuild: 'fisk.rebuild',
  showStatus: 'fisk.showStatus',
  restartServer: 'fisk.restartServer',
  showLog: 'fisk.showLog',
  /** Hidden from the palette: a search result's "also in N files" button (argument: the SearchHit). */
  openAlso: 'fisk.openAlso',
} as const;

/** `workspace/executeCommand` commands the server implements (docs/lsp-protocol.md). */
export const ServerCommands = {
  search: 'fisk.knowledge.search',
  show: 'fisk.knowledge.show',
  reindex: 'fisk.knowledge.reindex',
  status: 'fisk.knowledge.status',
} as const;
