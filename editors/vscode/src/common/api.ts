import * as vscode from 'vscode';
import { IndexStatus, SearchResult, ShowResult } from './protocol';
import { ServerState } from './server';
import { StatusView } from './status';

/** What `activate()` returns: other extensions (and the integration tests) can search through it. */
export interface FiskApi {
  search(query: string, topK?: number): Promise<SearchResult>;
  show(citation: string): Promise<ShowResult>;
  /** Asks the server for the index status and updates the status bar. */
  status(): Promise<IndexStatus | undefined>;
  readonly serverState: ServerState;
  readonly onDidChangeServerState: vscode.Event<ServerState>;
  readonly statusBar: { snapshot(): StatusView; readonly onDidChange: vscode.Event<StatusView> };
}
