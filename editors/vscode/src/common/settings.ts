import * as os from 'node:os';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { DEFAULT_SERVER_COMMAND, SETTINGS_SECTION } from './constants';
import { languageModels } from './expand';
import {
  checkValue,
  EMBEDDINGS_PROVIDERS,
  EMBEDDINGS_QUERY_TIMEOUT,
  EMBEDDINGS_RULE,
  EMBEDDINGS_THREADS,
  EMBEDDINGS_TIMEOUT,
  EmbeddingsProvider,
  EXPANSION_PROVIDERS,
  EXPANSION_TIMEOUT,
  ExpansionProvider,
  Limit,
  ruleProblems,
  TOP_K,
} from './contract';

/** Everything the extension reads from the `fisk.*` settings (package.json `contributes.configuration`). */
export interface FiskSettings {
  serverCommand: string;
  serverArgs: string[];
  paths: string[];
  exclude: string[];
  /** Only when the user set it (and it fits): otherwise the server's configured value applies. */
  topK?: number;
  watch: boolean;
  embeddings: EmbeddingsSettings;
  workspaceSymbols: boolean;
  /** A knowledge pack the server's first index run adopts (`fisk.prebuilt`; '' for none). */
  prebuilt: string;
  /** Language ids of the documents the client attaches to (`fisk.languages`). */
  languages: string[];
  expansion: ExpansionSettings;
  /** Settings that were out of range or of the wrong type and fell back to their default, named as the server names them. */
  problems: string[];
}

export interface EmbeddingsSettings {
  /** `openai` (a server at baseUrl) or `builtin` (a model run inside fisk-ls, no server needed). */
  provider: EmbeddingsProvider;
  /** builtin: a directory with model.onnx and tokenizer.json (nothing is downloaded then). */
  modelPath: string;
  /** builtin: onnxruntime threads for indexing (0: all cores but one). */
  threads?: number;
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  timeout?: number;
  queryTimeout?: number;
  queryPrefix: string;
  documentPrefix: string;
}

/** Question expansion (`fisk.expansion.*`): who writes the extra search strings for a question typed in the picker. */
export interface ExpansionSettings {
  /** `editor` (VS Code's language model, the default where VS Code has one), `openai` (a chat server the server calls) or `none`. */
  provider: ExpansionProvider;
  baseUrl: string;
  model: string;
  apiKeyEnv: string;
  timeout?: number;
  /** False when the provider is only the extension's default (then `none` is not sent). */
  chosen: boolean;
}

/** The object the server takes as initializationOptions and as `workspace/configuration` section `fisk`. */
export interface ServerSettings {
  paths?: string[];
  exclude?: string[];
  topK?: number;
  watch?: boolean;
  embeddings?: Partial<EmbeddingsSettings>;
  expansion?: Partial<Omit<ExpansionSettings, 'chosen'>>;
  workspaceSymbols: boolean;
  prebuilt?: string;
}

/** The server's default number of results (package.json's `fisk.topK` default). */
export const DEFAULT_TOP_K: number = TOP_K.default;
/** Markdown and plain text: the files the server indexes (.md .markdown .txt .text). */
export const DEFAULT_LANGUAGES: readonly string[] = ['markdown', 'plaintext'];

function shown(value: unknown): string {
  return String(JSON.stringify(value)).slice(0, 100);
}

export function getSettings(scope?: vscode.ConfigurationScope): FiskSettings {
  const config = vscode.workspace.getConfiguration(SETTINGS_SECTION, scope);
  const problems: string[] = [];
  const name = (key: string) => `${SETTINGS_SECTION}.${key}`;
  const given = (key: string): unknown => {
    const value = config.get<unknown>(key);
    return value === null ? undefined : value;
  };
  const text = (key: string, trim = true): string => {
    const value = given(key);
    if (value !== undefined && typeof value !== 'string') {
      problems.push(`${name(key)} (expected a string, got ${shown(value)})`);
    }
    return typeof value !== 'string' ? '' : trim ? value.trim() : value;
  };
  const list = (key: string, fallback: readonly string[] = []): string[] => {
    const value = given(key);
    if (value === undefined) {
      return [...fallback];
    }
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) {
      problems.push(`${name(key)} (expected a list of strings, got ${shown(value)})`);
      return [...fallback];
    }
    return value.map((v: string) => v.trim()).filter((v) => v !== '');
  };
  const flag = (key: string, fallback: boolean): boolean => {
    const value = given(key);
    if (value !== undefined && typeof value !== 'boolean') {
      problems.push(`${name(key)} (expected true or false, got ${shown(value)})`);
    }
    return typeof value === 'boolean' ? value : fallback;
  };
  const limited = (key: string, limit: Limit): number | undefined => {
    const value = given(key);
    const problem = value === undefined ? undefined : checkValue(limit, value);
    if (problem !== undefined) {
      problems.push(`${name(key)} (${problem})`);
    }
    return value === undefined || problem !== undefined ? undefined : (value as number);
  };
  const serverCommand = text('server.command') || DEFAULT_SERVER_COMMAND;
  const serverArgs = list('server.args');
  const paths = list('paths');
  const exclude = list('exclude');
  // config.get would answer package.json's default for an unset key: send topK only when the user set it.
  const isSet = (key: string) =>
    Object.entries(config.inspect(key) ?? {}).some(([scope, value]) => scope !== 'key' && !scope.startsWith('default') && value !== undefined);
  const topKSet = isSet('topK');
  const topK = topKSet ? limited('topK', TOP_K) : undefined;
  const watch = flag('watch', true);
  let provider = text('embeddings.provider') || 'openai';
  if (!(EMBEDDINGS_PROVIDERS as readonly string[]).includes(provider)) {
    problems.push(`${name('embeddings.provider')} (expected one of ${EMBEDDINGS_PROVIDERS.join(', ')}, got ${shown(provider)})`);
    provider = 'openai';
  }
  const embeddings: EmbeddingsSettings = {
    provider: provider as EmbeddingsProvider,
    modelPath: text('embeddings.modelPath'),
    threads: limited('embeddings.threads', EMBEDDINGS_THREADS),
    baseUrl: text('embeddings.baseUrl'),
    model: text('embeddings.model'),
    apiKeyEnv: text('embeddings.apiKeyEnv'),
    timeout: limited('embeddings.timeout', EMBEDDINGS_TIMEOUT),
    queryTimeout: limited('embeddings.queryTimeout', EMBEDDINGS_QUERY_TIMEOUT),
    queryPrefix: text('embeddings.queryPrefix', false),
    documentPrefix: text('embeddings.documentPrefix', false),
  };
  const expansionSettings = (): ExpansionSettings => {
    const lm = languageModels();
    // Default: the editor's model where VS Code has the API; the removed opt-in
    // `fisk.search.languageModelExpansion` set to false still means none.
    let chosen = isSet('expansion.provider');
    let provider = text('expansion.provider');
    if (!chosen) {
      chosen = given('search.languageModelExpansion') === false;
      provider = chosen || lm === undefined ? 'none' : 'editor';
    } else if (!(EXPANSION_PROVIDERS as readonly string[]).includes(provider)) {
      problems.push(`${name('expansion.provider')} (expected one of ${EXPANSION_PROVIDERS.join(', ')}, got ${shown(provider)})`);
      provider = lm === undefined ? 'none' : 'editor';
      chosen = false;
    }
    if (provider === 'editor' && lm === undefined) {
      problems.push(`${name('expansion.provider')} (editor needs VS Code's language model API, 1.90 or newer)`);
      provider = 'none';
    }
    return {
      provider: provider as ExpansionProvider,
      baseUrl: text('expansion.baseUrl'),
      model: text('expansion.model'),
      apiKeyEnv: text('expansion.apiKeyEnv'),
      timeout: limited('expansion.timeout', EXPANSION_TIMEOUT),
      chosen,
    };
  };
  // The provider rule is the server's (the schema's if/then/else), checked on what would be sent.
  const sent = serverEmbeddings(embeddings);
  const broken = sent === undefined ? [] : ruleProblems(EMBEDDINGS_RULE, sent);
  for (const [field, problem] of broken) {
    problems.push(`${name(field === undefined ? 'embeddings' : `embeddings.${field}`)} (${problem})`);
  }
  if (broken.length > 0) {
    // Left out, so the server keeps its default (lexical search), as it does with a bad object.
    Object.assign(embeddings, { provider: 'openai', baseUrl: '' });
  }
  return {
    serverCommand,
    expansion: expansionSettings(),
    serverArgs,
    paths,
    exclude,
    topK,
    watch,
    embeddings,
    workspaceSymbols: flag('workspaceSymbols', false),
    prebuilt: text('prebuilt'),
    languages: list('languages', DEFAULT_LANGUAGES),
    problems,
  };
}

/** The client's document selector: local files of the `fisk.languages` language ids. */
export function documentSelector(languages: readonly string[]): { scheme: string; language: string }[] {
  return [...new Set(languages)].map((language) => ({ scheme: 'file', language }));
}

/** Settings → the server's camelCase options; unset keys are left out so the server's defaults apply. */
export function toServerSettings(settings: FiskSettings): ServerSettings {
  const result: ServerSettings = { workspaceSymbols: settings.workspaceSymbols };
  if (settings.topK !== undefined) {
    result.topK = settings.topK;
  }
  if (settings.paths.length > 0) {
    result.paths = settings.paths;
  }
  if (settings.exclude.length > 0) {
    result.exclude = settings.exclude;
  }
  if (!settings.watch) {
    result.watch = false;
  }
  if (settings.prebuilt !== '') {
    result.prebuilt = settings.prebuilt;
  }
  const embeddings = serverEmbeddings(settings.embeddings);
  if (embeddings !== undefined) {
    result.embeddings = embeddings;
  }
  const expansion = serverExpansion(settings.expansion);
  if (expansion !== undefined) {
    result.expansion = expansion;
  }
  return result;
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
function serverExpansion(e: ExpansionSettings): ServerSettings['expansion'] {
  if (e.provider === 'none' && !e.chosen) {
    return undefined;
  }
  const expansion: ServerSettings['expansion'] = { provider: e.provider };
  if (e.provider === 'openai') {
    Object.assign(expansion, { baseUrl: e.baseUrl, model: e.model }, e.apiKeyEnv === '' ? {} : { apiKeyEnv: e.apiKeyEnv });
  }
  if (e.provider !== 'none' && e.timeout !== undefined) {
    expansion.timeout = e.timeout;
  }
  return expansion;
}

/** The embeddings object sent to the server; undefined (lexical search) for openai without a base URL. */
function serverEmbeddings(e: EmbeddingsSettings): Partial<EmbeddingsSettings> | undefined {
  // builtin needs no server: baseUrl and apiKeyEnv are not sent (a baseUrl left in the settings is no error).
  const builtin = e.provider === 'builtin';
  if (!builtin && e.baseUrl === '') {
    return undefined;
  }
  const embeddings: Partial<EmbeddingsSettings> = builtin
    ? { provider: 'builtin', queryPrefix: e.queryPrefix, documentPrefix: e.documentPrefix }
    : { baseUrl: e.baseUrl, queryPrefix: e.queryPrefix, documentPrefix: e.documentPrefix };
  if (e.model !== '') {
    embeddings.model = e.model;
  }
  if (!builtin && e.apiKeyEnv !== '') {
    embeddings.apiKeyEnv = e.apiKeyEnv;
  }
  if (builtin && e.modelPath !== '') {
    embeddings.modelPath = e.modelPath;
  }
  if (builtin && e.threads !== undefined) {
    embeddings.threads = e.threads;
  }
  if (e.timeout !== undefined) {
    embeddings.timeout = e.timeout;
  }
  if (e.queryTimeout !== undefined) {
    embeddings.queryTimeout = e.queryTimeout;
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
