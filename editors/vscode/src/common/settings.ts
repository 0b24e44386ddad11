import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_SERVER_COMMAND, SETTINGS_SECTION } from './constants';

/** Everything the extension reads from the `fisk.*` settings (package.json `contributes.configuration`). */
export interface FiskSettings {
  serverCommand: string;
  serverArgs: string[];
  paths: string[];
  topK: number;
  embeddings: EmbeddingsSettings;
  workspaceSymbols: boolean;
}

export interface EmbeddingsSettings {
  /** `openai` (a server at baseUrl) or `builtin` (a model run inside fisk-ls); '' = openai. */
  provider: string;
  modelPath: string;
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

export const DEFAULT_TOP_K = 5;
export const MAX_TOP_K = 50;

export function getSettings(scope?: vscode.ConfigurationScope): FiskSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const text = (key: string, fallback = ''): string => {
    const value = config.get<unknown>(key);
    return typeof value === 'string' ? value.trim() : fallback;
  };
  const list = (key: string): string[] => {
    const value = config.get<unknown>(key);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string' && v.trim() !== '').map((v) => v.trim()) : [];
  };
  return {
    serverCommand: text('server.command') || DEFAULT_SERVER_COMMAND,
    serverArgs: list('server.args'),
    paths: list('paths'),
    topK: clampTopK(config.get<unknown>('topK')),
    embeddings: {
      provider: text('embeddings.provider'),
      modelPath: text('embeddings.modelPath'),
      baseUrl: text('embeddings.baseUrl'),
      model: text('embeddings.model'),
      apiKeyEnv: text('embeddings.apiKeyEnv'),
      queryPrefix: config.get<string>('embeddings.queryPrefix') ?? '',
      documentPrefix: config.get<string>('embeddings.documentPrefix') ?? '',
    },
    workspaceSymbols: config.get<boolean>('workspaceSymbols') === true,
  };
}

export function clampTopK(value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    return DEFAULT_TOP_K;
  }
  return Math.min(MAX_TOP_K, Math.max(1, Math.round(value)));
}

/** Settings → the server's camelCase options; unset keys are left out so the server's defaults apply. */
export function toServerSettings(settings: FiskSettings): ServerSettings {
  const result: ServerSettings = { topK: settings.topK, workspaceSymbols: settings.workspaceSymbols };
  if (settings.paths.length > 0) {
    result.paths = settings.paths;
  }
  const e = settings.embeddings;
  if (e.provider === 'builtin') {
    const embeddings: Partial<EmbeddingsSettings> = { provider: 'builtin', queryPrefix: e.queryPrefix, documentPrefix: e.documentPrefix };
    if (e.model !== '') {
      embeddings.model = e.model;
    }
    if (e.modelPath !== '') {
      embeddings.modelPath = e.modelPath;
    }
    result.embeddings = embeddings;
  } else if (e.baseUrl !== '') {
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
  const keys = ['server', 'paths', 'topK', 'embeddings', 'workspaceSymbols'];
  return !keys.some((key) => event.affectsConfiguration(`${SETTINGS_SECTION}.${key}`));
}
