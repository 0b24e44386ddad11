import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { mock } from './mock/vscode';
import { reset } from './helpers';
import { documentSelector, expandVariables, expansionOn, getSettings, needsRestart } from '../../common/settings';

beforeEach(reset);

test('no settings: fisk-ls on PATH, workspace symbols off, expansion by the editor\'s model, nothing else sent (no topK: the server\'s own applies)', () => {
  const settings = getSettings();
  assert.equal(settings.serverCommand, 'fisk-ls');
  assert.deepEqual(settings.serverArgs, []);
  assert.equal(settings.topK, undefined);
  assert.deepEqual(settings.server, { expansion: { provider: 'editor' }, workspaceSymbols: false });
  assert.deepEqual(settings.languages, ['markdown', 'plaintext']);
  assert.deepEqual(settings.problems, []);
});

test('all settings map to the camelCase shape of docs/lsp-protocol.md', () => {
  Object.assign(mock.settings, {
    'fisk.paths': ['docs', ' README.md ', ''],
    'fisk.topK': 8,
    'fisk.embeddings.baseUrl': 'http://127.0.0.1:8080/v1',
    'fisk.embeddings.model': 'all-minilm-l6-v2',
    'fisk.embeddings.apiKeyEnv': 'EMBEDDINGS_API_KEY',
    'fisk.embeddings.queryPrefix': 'query: ',
    'fisk.embeddings.documentPrefix': 'passage: ',
    'fisk.workspaceSymbols': true,
  });
  assert.deepEqual(getSettings().server, {
    paths: ['docs', 'README.md'],
    topK: 8,
    embeddings: {
      baseUrl: 'http://127.0.0.1:8080/v1',
      model: 'all-minilm-l6-v2',
      apiKeyEnv: 'EMBEDDINGS_API_KEY',
      queryPrefix: 'query: ',
      documentPrefix: 'passage: ',
    },
    expansion: { provider: 'editor' },
    workspaceSymbols: true,
  });
});

test('the builtin provider needs no base URL and sends its model path and threads, never a base URL', () => {
  Object.assign(mock.settings, {
    'fisk.embeddings.provider': 'builtin',
    'fisk.embeddings.modelPath': ' /models/minilm ',
    'fisk.embeddings.threads': 1,
    'fisk.embeddings.baseUrl': 'http://ignored/v1',
    'fisk.embeddings.apiKeyEnv': 'IGNORED',
  });
  assert.deepEqual(getSettings().problems, []);
  assert.deepEqual(getSettings().server.embeddings, {
    provider: 'builtin',
    modelPath: '/models/minilm',
    threads: 1,
    queryPrefix: '',
    documentPrefix: '',
  });
});

test('an unknown provider or negative threads are sent as set: the server names them', () => {
  Object.assign(mock.settings, { 'fisk.embeddings.provider': 'ollama', 'fisk.embeddings.threads': -1, 'fisk.embeddings.baseUrl': 'http://e/v1' });
  const settings = getSettings();
  assert.deepEqual(settings.problems, []);
  assert.deepEqual(settings.server.embeddings, { provider: 'ollama', baseUrl: 'http://e/v1', queryPrefix: '', documentPrefix: '' });
  mock.settings['fisk.embeddings.provider'] = 'builtin';
  assert.deepEqual(getSettings().server.embeddings, { provider: 'builtin', threads: -1, queryPrefix: '', documentPrefix: '' });
});

test('embeddings are only sent when a base URL is set', () => {
  mock.settings['fisk.embeddings.model'] = 'm';
  assert.equal(getSettings().server.embeddings, undefined);
});

test('topK is sent only when set, as set, whatever its value (the server checks it and names a bad one)', () => {
  for (const value of [0, 21, 7.6, '9', true, 1, 20]) {
    mock.settings['fisk.topK'] = value;
    const settings = getSettings();
    assert.equal(settings.topK, value, `topK ${String(value)}`);
    assert.equal(settings.server.topK, value, `topK ${String(value)}`);
    assert.deepEqual(settings.problems, []);
  }
});

test("only the extension's own settings are checked here; the server's go as set", () => {
  Object.assign(mock.settings, {
    'fisk.paths': ['docs', 3, ' '],
    'fisk.topK': 30,
    'fisk.watch': 'no',
    'fisk.languages': 'markdown',
    'fisk.server.args': [1],
    'fisk.embeddings.baseUrl': 'http://127.0.0.1:8080/v1',
    'fisk.server.command': '/opt/fisk-ls',
  });
  const settings = getSettings();
  assert.deepEqual(settings.problems, ['fisk.server.args (expected a list of strings, got [1])', 'fisk.languages (expected a list of strings, got "markdown")']);
  assert.equal(settings.serverCommand, '/opt/fisk-ls');
  assert.deepEqual(settings.serverArgs, []);
  assert.deepEqual(settings.languages, ['markdown', 'plaintext']);
  assert.deepEqual(settings.server, {
    workspaceSymbols: false,
    topK: 30,
    paths: ['docs', 3],
    watch: 'no',
    embeddings: { baseUrl: 'http://127.0.0.1:8080/v1', queryPrefix: '', documentPrefix: '' },
    expansion: { provider: 'editor' },
  });
});

test('expansion: editor by default where VS Code has the language model API; none without it, or when the removed opt-in was set off', () => {
  assert.deepEqual(getSettings().server.expansion, { provider: 'editor' });
  assert.equal(expansionOn(getSettings()), true);
  mock.settings['fisk.search.languageModelExpansion'] = true;
  assert.deepEqual(getSettings().server.expansion, { provider: 'editor' }, 'the old opt-in on: the new default');
  mock.settings['fisk.search.languageModelExpansion'] = false;
  assert.deepEqual(getSettings().server.expansion, { provider: 'none' }, 'the old setting off: none, sent');
  assert.equal(expansionOn(getSettings()), false);
  mock.settings['fisk.expansion.provider'] = 'editor';
  assert.deepEqual(getSettings().server.expansion, { provider: 'editor' }, 'the new setting wins');
  delete mock.settings['fisk.expansion.provider'];
  delete mock.settings['fisk.search.languageModelExpansion'];
  mock.noLanguageModelApi();
  assert.equal(getSettings().server.expansion, undefined, 'no API: nothing sent, the server\'s own configuration applies');
  assert.equal(expansionOn(getSettings()), false);
  assert.deepEqual(getSettings().problems, []);
  mock.settings['fisk.expansion.provider'] = 'editor';
  assert.deepEqual(getSettings().problems, ["fisk.expansion.provider (editor needs VS Code's language model API, 1.90 or newer)"]);
  assert.equal(expansionOn(getSettings()), false);
});

test('expansion: openai sends the chat server\'s fields and the timeout; none sends only the provider; a bad value is sent as set', () => {
  Object.assign(mock.settings, {
    'fisk.expansion.provider': 'openai',
    'fisk.expansion.baseUrl': ' http://127.0.0.1:11434/v1 ',
    'fisk.expansion.model': 'qwen3:4b',
    'fisk.expansion.apiKeyEnv': 'CHAT_API_KEY',
    'fisk.expansion.timeout': 20,
  });
  assert.deepEqual(getSettings().server.expansion, {
    provider: 'openai',
    baseUrl: 'http://127.0.0.1:11434/v1',
    model: 'qwen3:4b',
    apiKeyEnv: 'CHAT_API_KEY',
    timeout: 20,
  });
  mock.settings['fisk.expansion.provider'] = 'editor';
  assert.deepEqual(getSettings().server.expansion, { provider: 'editor', timeout: 20 }, 'the chat server\'s fields are not sent');
  mock.settings['fisk.expansion.provider'] = 'none';
  assert.deepEqual(getSettings().server.expansion, { provider: 'none' });
  Object.assign(mock.settings, { 'fisk.expansion.provider': 'copilot', 'fisk.expansion.timeout': 600 });
  const settings = getSettings();
  assert.deepEqual(settings.problems, []);
  assert.deepEqual(settings.server.expansion, { provider: 'copilot', timeout: 600 }, 'sent as set: the server names both');
});

test('the document selector is markdown and plain text files unless fisk.languages says otherwise', () => {
  assert.deepEqual(documentSelector(getSettings().languages), [
    { scheme: 'file', language: 'markdown' },
    { scheme: 'file', language: 'plaintext' },
  ]);
  mock.settings['fisk.languages'] = ['markdown', ' restructuredtext ', 'markdown', ''];
  assert.deepEqual(documentSelector(getSettings().languages), [
    { scheme: 'file', language: 'markdown' },
    { scheme: 'file', language: 'restructuredtext' },
  ]);
  mock.settings['fisk.languages'] = [];
  assert.deepEqual(documentSelector(getSettings().languages), [], 'an empty list attaches to no document');
});

test('a blank server command falls back to fisk-ls', () => {
  mock.settings['fisk.server.command'] = '   ';
  assert.equal(getSettings().serverCommand, 'fisk-ls');
});

test('variables in the server command are expanded', () => {
  assert.equal(expandVariables('~/bin/fisk-ls'), path.join(os.homedir(), 'bin/fisk-ls'));
  assert.equal(expandVariables('${workspaceFolder}/.venv/bin/fisk-ls', '/ws'), '/ws/.venv/bin/fisk-ls');
  assert.equal(expandVariables('${env:VENV}/bin/fisk-ls', undefined, { VENV: '/v' }), '/v/bin/fisk-ls');
  assert.equal(expandVariables('${userHome}/x'), `${os.homedir()}/x`);
  assert.equal(expandVariables('fisk-ls'), 'fisk-ls');
});

test('only server-side settings restart the server', () => {
  const event = (...changed: string[]) => ({
    affectsConfiguration: (section: string) => changed.some((c) => c === section || c.startsWith(`${section}.`)),
  });
  assert.equal(needsRestart(event('fisk.trace.server')), false);
  assert.equal(needsRestart(event('editor.fontSize')), false);
  assert.equal(needsRestart(event('fisk.paths')), true);
  assert.equal(needsRestart(event('fisk.embeddings.model')), true);
  assert.equal(needsRestart(event('fisk.expansion.provider')), true);
  assert.equal(needsRestart(event('fisk.server.command')), true);
  assert.equal(needsRestart(event('fisk.languages')), true);
});
