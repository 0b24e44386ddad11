import * as vscode from 'vscode';
import type { SearchEvent } from './commands';
import { IndexStatus, SearchResult, ShowResult } from './protocol';
import type { KeptList, PickerView } from './search';
import type { EnableOutcome } from './semantic';
import { ServerState } from './server';
import { StatusView } from './status';

/** What `activate()` returns: other extensions (and the integration tests) can search through it. */
export interface FiskApi {
  /**
   * topK: absent, the server's configured number; also: up to 4 extra search strings fused with the
   * query's; paths: folders, files or globs to search in (relative to each project root, or absolute);
   * tags: pages whose front matter lists one of them.
   */
  search(query: string, topK?: number, also?: string[], paths?: string[], tags?: string[]): Promise<SearchResult>;
  show(citation: string): Promise<ShowResult>;
  /** Asks the server for the index status and updates the status bar. */
  status(): Promise<IndexStatus | undefined>;
  readonly serverState: ServerState;
  /** The fisk-ls executable started last: the one on PATH, the configured one, or the extension's own. */
  readonly serverExecutable: string | undefined;
  /** Where the extension sets up its own fisk-ls when none is on PATH. */
  readonly serverEnvironment: string;
  /** Fires after every search request (the picker's, the tool's, this API's), with its arguments and result or error. */
  readonly onDidSearch: vscode.Event<SearchEvent>;
  readonly onDidChangeServerState: vscode.Event<ServerState>;
  /** The server's `window/showMessage` notifications as the extension shows them (a bad setting is named in one). */
  readonly onDidShowServerMessage: vscode.Event<{ type: number; message: string }>;
  readonly statusBar: { snapshot(): StatusView; readonly onDidChange: vscode.Event<StatusView> };
  /** The search picker's list once the workbench shows it (its active row). */
  readonly searchPicker: { readonly onDidChange: vscode.Event<PickerView> };
  /** The list the Fisk Results view shows. */
  readonly results: { current(): KeptList | undefined };
  /** The once-per-project offer of the built-in model, and what accepting it did. */
  readonly semanticSearch: {
    offered(): string | undefined;
    readonly onDidOffer: vscode.Event<string>;
    readonly onDidEnable: vscode.Event<EnableOutcome>;
  };
}
