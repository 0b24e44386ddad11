import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_SERVER_COMMAND, SETTINGS_SECTION } from './constants';
import { languageModels } from './expand';

/**
 * Everything the extension reads from the `fisk.*` settings (package.json `contributes.configuration`).
 * The server's settings are sent as the user set them: the server checks them and one message of its
 * own names every bad one (docs/lsp-protocol.md). The extension checks only its own settings.
 */
export interface FiskSettings {
  serverCommand: string;
  serverArgs: string[];
  /** Language ids of the documents the client attaches to (`fisk.languages`). */
  languages: string[];
  /** The server's `fisk` settings, as initializationOptions and `workspace/configuration` send them. */
  server: ServerSettings;
  /** `fisk.topK` as set (undefined when unset: the server's own value applies): the picker's page size. */
  topK?: unknown;
  expansion: ExpansionSettings;
  /** The extension's own settings that were of the wrong type and fell back to their default. */
  problems: string[];
}

/** Question expansion (`fisk.expansion.provider`): who writes the extra search strings for a question typed in the picker. */
export interface ExpansionSettings {
  /** `editor` (VS Code's language model, answered by the extension), `none`, or what the server takes (`openai`). */
  provider: unknown;
  /** False when the provider is only the extension's default (then `none` is not sent). */
  chosen: boolean;
}

/**
 * The object the server takes as initializationOptions and as `workspace/configuration` section `fisk`
 * (camelCase, docs/lsp-protocol.md). Values are the user's, unchecked: a key left out keeps the
 * server's value.
 */
export interface ServerSettings {
  paths?: unknown;
  exclude?: unknown;
  topK?: unknown;
  watch?: unknown;
  embeddings?: Record<string, unknown>;
  expansion?: Record<string, unknown>;
  workspaceSymbols: unknown;
  prebuilt?: unknown;
}

/** The server's default number of results: package.json's `fisk.topK` default (a unit test keeps them equal). */
export const DEFAULT_TOP_K = 5;
/** Markdown and plain text: the files the server indexes (.md .markdown .txt .text). */
export const DEFAULT_LANGUAGES: readonly string[] = ['markdown', 'plaintext'];

function shown(value: unknown): string {
  return String(JSON.stringify(value)).slice(0, 100);
}

/** A string trimmed; anything else as it is (the server names a value of the wrong type). */
function trimmed(value: unknown): unknown {
  return typeof value === 'string' ? value.trim() : value;
}

/** True when `value` is worth sending: set, and not an empty string. */
function given(value: unknown): boolean {
  return value !== undefined && value !== null && value !== '';
}

export function getSettings(scope?: vscode.ConfigurationScope): FiskSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const problems: string[] = [];
  const name = (key: string) => `${SETTINGS_SECTION}.${key}`;
  const get = (key: string): unknown => {
    const value = config.get<unknown>(key);
    return value === null ? undefined : value;
  };
  // config.get answers package.json's default for an unset key: some keys are sent only when the user set them.
  const isSet = (key: string) =>
    Object.entries(config.inspect(key) ?? {}).some(([where, value]) => where !== 'key' && !where.startsWith('default') && value !== undefined);
  /** One of the extension's own lists of strings (trimmed, blanks dropped), or its default with a problem named. */
  const ownList = (key: string, fallback: readonly string[] = []): string[] => {
    const value = get(key);
    if (value === undefined) {
      return [...fallback];
    }
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      problems.push(`${name(key)} (expected a list of strings, got ${shown(value)})`);
      return [...fallback];
    }
    return value.map((v: string) => v.trim()).filter((v) => v !== '');
  };
  const command = get('server.command');
  if (command !== undefined && typeof command !== 'string') {
    problems.push(`${name('server.command')} (expected a string, got ${shown(command)})`);
  }
  const serverCommand = (typeof command === 'string' ? command.trim() : '') || DEFAULT_SERVER_COMMAND;
  const serverArgs = ownList('server.args');
  const languages = ownList('languages', DEFAULT_LANGUAGES);
  const expansion = expansionSettings(get, isSet, (problem) => problems.push(`${name('expansion.provider')} (${problem})`));
  const topK = isSet('topK') ? get('topK') : undefined;
  const server: ServerSettings = { workspaceSymbols: get('workspaceSymbols') ?? false };
  if (topK !== undefined) {
    server.topK = topK;
  }
  for (const key of ['paths', 'exclude'] as const) {
    const value = get(key);
    const list = Array.isArray(value) ? value.map(trimmed).filter((v) => v !== '') : value;
    if (value !== undefined && !(Array.isArray(list) && list.length === 0)) {
      server[key] = list;
    }
  }
  const watch = get('watch');
  if (watch !== undefined && watch !== true) {
    server.watch = watch;
  }
  const prebuilt = trimmed(get('prebuilt'));
  if (given(prebuilt)) {
    server.prebuilt = prebuilt;
  }
  const embeddings = serverEmbeddings((key) => get(`embeddings.${key}`));
  if (embeddings !== undefined) {
    server.embeddings = embeddings;
  }
  const sentExpansion = serverExpansion(expansion, (key) => get(`expansion.${key}`));
  if (sentExpansion !== undefined) {
    server.expansion = sentExpansion;
  }
  return { serverCommand, serverArgs, languages, server, topK, expansion, problems };
}

/**
 * The expansion provider: `editor` by default where VS Code has the language model API (the removed
 * opt-in `fisk.search.languageModelExpansion` set to false still means none). `editor` is the
 * extension's own job (it answers `fisk/expand`), so without the API it is a problem of its own.
 */
function expansionSettings(get: (key: string) => unknown, isSet: (key: string) => boolean, problem: (text: string) => void): ExpansionSettings {
  const lm = languageModels();
  if (!isSet('expansion.provider')) {
    const chosen = get('search.languageModelExpansion') === false;
    return { provider: chosen || lm === undefined ? 'none' : 'editor', chosen };
  }
  const provider = trimmed(get('expansion.provider'));
  if (provider === 'editor' && lm === undefined) {
    problem("editor needs VS Code's language model API, 1.90 or newer");
    return { provider: 'none', chosen: true };
  }
  return { provider, chosen: true };
}

/** The document selector: local files of the `fisk.languages` language ids. */
export function documentSelector(languages: readonly string[]): { scheme: string; language: string }[] {
  return [...new Set(languages)].map((language) => ({ scheme: 'file', language }));
}

/** True when searches in the picker ask for expansion (`expand: true`): a provider other than none. */
export function expansionOn(settings: FiskSettings): boolean {
  return settings.expansion.provider !== 'none';
}

/**
 * The expansion object sent to the server: the provider and, for openai, the chat server's fields
 * (the server checks them and names what is missing). A default `none` is not sent, so the server's
 * own configuration (agent.yaml) applies.
 */
function serverExpansion(e: ExpansionSettings, get: (key: string) => unknown): Record<string, unknown> | undefined {
  if (e.provider === 'none' && !e.chosen) {
    return undefined;
  }
  const expansion: Record<string, unknown> = { provider: e.provider };
  if (e.provider === 'openai') {
    expansion.baseUrl = trimmed(get('baseUrl')) ?? '';
    expansion.model = trimmed(get('model')) ?? '';
    const key = trimmed(get('apiKeyEnv'));
    if (given(key)) {
      expansion.apiKeyEnv = key;
    }
  }
  const timeout = get('timeout');
  if (e.provider !== 'none' && timeout !== undefined) {
    expansion.timeout = timeout;
  }
  return expansion;
}

/**
 * The embeddings object sent to the server; undefined (lexical search) for the default provider
 * without a base URL. `builtin` runs a model inside fisk-ls: baseUrl and apiKeyEnv are not sent (a
 * baseUrl left in the settings is no error).
 */
function serverEmbeddings(get: (key: string) => unknown): Record<string, unknown> | undefined {
  const provider = trimmed(get('provider')) ?? 'openai';
  const baseUrl = trimmed(get('baseUrl'));
  const builtin = provider === 'builtin';
  if ((provider === 'openai' || provider === '') && !given(baseUrl)) {
    return undefined;
  }
  const embeddings: Record<string, unknown> = {};
  if (provider !== 'openai' && provider !== '') {
    embeddings.provider = provider;
  }
  if (!builtin) {
    embeddings.baseUrl = baseUrl ?? '';
  }
  embeddings.queryPrefix = get('queryPrefix') ?? '';
  embeddings.documentPrefix = get('documentPrefix') ?? '';
  const fields = builtin ? ['model', 'modelPath', 'threads', 'timeout', 'queryTimeout'] : ['model', 'apiKeyEnv', 'timeout', 'queryTimeout'];
  for (const key of fields) {
    const value = trimmed(get(key));
    if (given(value)) {
      embeddings[key] = value;
    }
  }
  return embeddings;
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
  const keys = ['server', 'paths', 'exclude', 'topK', 'watch', 'embeddings', 'expansion', 'workspaceSymbols', 'prebuilt', 'languages'];
  return !keys.some((key) => event.affectsConfiguration(`${SETTINGS_SECTION}.${key}`));
}
