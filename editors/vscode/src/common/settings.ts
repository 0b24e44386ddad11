import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_SERVER_COMMAND, SETTINGS_SECTION } from './constants';
import { isTopK, TOP_K, topKProblem } from './contract';

/** Everything the extension reads from the `fisk.*` settings (package.json `contributes.configuration`). */
export interface FiskSettings {
  serverCommand: string;
  serverArgs: string[];
  paths: string[];
  topK: number;
  embeddings: EmbeddingsSettings;
  workspaceSymbols: boolean;
  /** Language ids of the documents the client attaches to (`fisk.languages`). */
  languages: string[];
  /** Settings that were out of range or of the wrong type and fell back to their default, named as the server names them. */
  problems: string[];
}

export interface EmbeddingsSettings {
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  queryPrefix: string;
  documentPrefix: string;
}

/** The object the server takes as initializationOptions and as `workspace/configuration` section `fisk`. */
export interface ServerSettings {
  paths?: string[];
  topK: number;
  embeddings?: Partial<EmbeddingsSettings>;
  workspaceSymbols: boolean;
}

export const DEFAULT_TOP_K: number = TOP_K.default;
/** Markdown and plain text: the files the server indexes (.md .markdown .txt .text). */
export const DEFAULT_LANGUAGES: readonly string[] = ['markdown', 'plaintext'];

export function getSettings(scope?: vscode.ConfigurationScope): FiskSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const problems: string[] = [];
  const name = (key: string) => `${SETTINGS_SECTION}.${key}`;
  const text = (key: string, fallback = ''): string => {
    const value = config.get<unknown>(key);
    if (value !== undefined && value !== null && typeof value !== 'string') {
      problems.push(`${name(key)} (expected a string)`);
    }
    return typeof value === 'string' ? value.trim() : fallback;
  };
  const raw = (key: string): string => {
    const value = config.get<unknown>(key);
    return typeof value === 'string' ? value : '';
  };
  const list = (key: string, what: string, fallback: readonly string[] = []): string[] => {
    const value = config.get<unknown>(key);
    if (value === undefined || value === null) {
      return [...fallback];
    }
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      problems.push(`${name(key)} (expected a list of ${what})`);
      return [...fallback];
    }
    return value.map((v: string) => v.trim()).filter((v) => v !== '');
  };
  const serverCommand = text('server.command') || DEFAULT_SERVER_COMMAND;
  const serverArgs = list('server.args', 'arguments');
  const paths = list('paths', 'paths');
  const topK = config.get<unknown>('topK');
  if (topK !== undefined && topK !== null && !isTopK(topK)) {
    problems.push(topKProblem(name('topK')));
  }
  const embeddings: EmbeddingsSettings = {
    baseUrl: text('embeddings.baseUrl'),
    model: text('embeddings.model'),
    apiKeyEnv: text('embeddings.apiKeyEnv'),
    queryPrefix: raw('embeddings.queryPrefix'),
    documentPrefix: raw('embeddings.documentPrefix'),
  };
  if (embeddings.baseUrl !== '' && embeddings.model === '') {
    problems.push(`${name('embeddings')} (baseUrl and model are required)`);
    embeddings.baseUrl = '';
  }
  return {
    serverCommand,
    serverArgs,
    paths,
    topK: isTopK(topK) ? topK : DEFAULT_TOP_K,
    embeddings,
    workspaceSymbols: config.get<boolean>('workspaceSymbols') === true,
    languages: list('languages', 'language ids', DEFAULT_LANGUAGES),
    problems,
  };
}

/** The client's document selector: local files of the `fisk.languages` language ids. */
export function documentSelector(languages: readonly string[]): { scheme: string; language: string }[] {
  return [...new Set(languages)].map((language) => ({ scheme: 'file', language }));
}

/** Settings → the server's camelCase options; unset keys are left out so the server's defaults apply. */
export function toServerSettings(settings: FiskSettings): ServerSettings {
  const result: ServerSettings = { topK: settings.topK, workspaceSymbols: settings.workspaceSymbols };
  if (settings.paths.length > 0) {
    result.paths = settings.paths;
  }
  const e = settings.embeddings;
  if (e.baseUrl !== '') {
    const embeddings: Partial<EmbeddingsSettings> = { baseUrl: e.baseUrl, queryPrefix: e.queryPrefix, documentPrefix: e.documentPrefix };
    if (e.model !== '') {
      embeddings.model = e.model;
    }
    if (e.apiKeyEnv !== '') {
      embeddings.apiKeyEnv = e.apiKeyEnv;
    }
    result.embeddings = embeddings;
  }
  return result;
}

/** Expands `~`, `${userHome}`, `${workspaceFolder}` and `${env:NAME}` in a command path. */
export function expandVariables(value: string, workspaceFolder?: string, env: NodeJS.ProcessEnv = process.env): string {
  let result = value
    .replace(/\$\{userHome\}/g, os.homedir())
    .replace(/\$\{env:([^}]+)\}/g, (_m, name: string) => env[name] ?? '');
  if (workspaceFolder !== undefined) {
    result = result.replace(/\$\{workspaceFolder\}/g, workspaceFolder);
  }
  if (result === '~' || result.startsWith('~/') || result.startsWith('~\\')) {
    result = path.join(os.homedir(), result.slice(1));
  }
  return result;
}

/** True when a settings change needs a server restart (all of `fisk.*` except the client-side trace level). */
export function needsRestart(event: vscode.ConfigurationChangeEvent): boolean {
  return event.affectsConfiguration(SETTINGS_SECTION) && !onlyTraceChanged(event);
}

function onlyTraceChanged(event: vscode.ConfigurationChangeEvent): boolean {
  const keys = ['server', 'paths', 'topK', 'embeddings', 'workspaceSymbols', 'languages'];
  return !keys.some((key) => event.affectsConfiguration(`${SETTINGS_SECTION}.${key}`));
}
