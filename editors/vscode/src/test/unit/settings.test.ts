import * as assert from 'node:assert/strict';
import * as os from 'node:os';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { mock } from './mock/vscode';
import { reset } from './helpers';
import { clampTopK, expandVariables, getSettings, needsRestart, toServerSettings } from '../../common/settings';

beforeEach(reset);

test('no settings: fisk-ls on PATH, topK 5, workspace symbols off, nothing else sent', () => {
  const settings = getSettings();
  assert.equal(settings.serverCommand, 'fisk-ls');
  assert.deepEqual(settings.serverArgs, []);
  assert.deepEqual(toServerSettings(settings), { topK: 5, workspaceSymbols: false });
});

test('all settings map to the camelCase shape of docs/lsp-protocol.md', () => {
  Object.assign(mock.settings, {
    'fisk.paths': ['docs', ' README.md ', '', 3],
    'fisk.topK': 8,
    'fisk.embeddings.baseUrl': 'http://127.0.0.1:8080/v1',
    'fisk.embeddings.model': 'all-minilm-l6-v2',
    'fisk.embeddings.apiKeyEnv': 'EMBEDDINGS_API_KEY',
    'fisk.embeddings.queryPrefix': 'query: ',
    'fisk.embeddings.documentPrefix': 'passage: ',
    'fisk.workspaceSymbols': true,
  });
  assert.deepEqual(toServerSettings(getSettings()), {
    paths: ['docs', 'README.md'],
    topK: 8,
    embeddings: {
      baseUrl: 'http://127.0.0.1:8080/v1',
      model: 'all-minilm-l6-v2',
      apiKeyEnv: 'EMBEDDINGS_API_KEY',
      queryPrefix: 'query: ',
      documentPrefix: 'passage: ',
    },
    workspaceSymbols: true,
  });
});

test('embeddings are only sent when a base URL is set', () => {
  mock.settings['fisk.embeddings.model'] = 'm';
  assert.equal(toServerSettings(getSettings()).embeddings, undefined);
});

test('the builtin provider needs no base URL and sends its model path', () => {
  Object.assign(mock.settings, {
    'fisk.embeddings.provider': 'builtin',
    'fisk.embeddings.modelPath': ' /models/minilm ',
    'fisk.embeddings.baseUrl': 'http://ignored/v1',
  });
  assert.deepEqual(toServerSettings(getSettings()).embeddings, {
    provider: 'builtin',
    modelPath: '/models/minilm',
    queryPrefix: '',
    documentPrefix: '',
  });
});

test('topK is clamped to 1..50 and rounded; junk falls back to 5', () => {
  assert.equal(clampTopK(0), 1);
  assert.equal(clampTopK(500), 50);
  assert.equal(clampTopK(7.6), 8);
  assert.equal(clampTopK('9'), 5);
  assert.equal(clampTopK(Number.NaN), 5);
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
  assert.equal(needsRestart(event('fisk.server.command')), true);
});
