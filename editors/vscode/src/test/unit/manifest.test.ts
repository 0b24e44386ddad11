import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { FakeLanguageClient } from './mock/languageclient';
import { mock, window } from './mock/vscode';
import { reset } from './helpers';
import { commandViews } from './helpers';
import { registerCommands } from '../../common/commands';
import { Commands, DEFAULT_SERVER_COMMAND, TOOL_NAME } from '../../common/constants';
import { SCOPE_CONTEXT } from '../../common/search';
import { MAX_RESULTS } from '../../common/searchItems';
import { FiskServer } from '../../common/server';
import { DEFAULT_TOP_K, getSettings } from '../../common/settings';
import { StatusBar } from '../../common/status';

const root = path.resolve(__dirname, '../../..');
const manifest = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8'));
const properties: Record<string, any> = manifest.contributes.configuration.properties;

beforeEach(reset);

test('every contributed command is registered, and every registered command is contributed', () => {
  const server = new FiskServer(window.createOutputChannel('Fisk') as never);
  registerCommands(server, new StatusBar(server), commandViews());
  const contributed = manifest.contributes.commands.map((c: { command: string }) => c.command).sort();
  assert.deepEqual([...mock.commands.keys()].sort(), contributed);
  assert.deepEqual(Object.values(Commands).sort(), contributed);
  for (const c of manifest.contributes.commands) {
    assert.equal(c.category, 'Fisk', c.command);
  }
  FakeLanguageClient.reset();
});

test('the commands that need a result, a folder or an open picker are hidden from the command palette', () => {
  const hidden = (manifest.contributes.menus?.commandPalette ?? []).filter((m: { when?: string }) => m.when === 'false');
  assert.deepEqual(hidden.map((m: { command: string }) => m.command).sort(), [Commands.openAlso, Commands.openResult, Commands.searchInFolder, Commands.toggleSearchScope].sort());
});

test('Search in Folder… is on the explorer\'s context menu of folders, beside the built-in Find in Folder', () => {
  assert.deepEqual(manifest.contributes.menus['explorer/context'], [
    { command: Commands.searchInFolder, when: 'explorerResourceIsFolder', group: '4_search@10' },
  ]);
  const title = manifest.contributes.commands.find((c: { command: string }) => c.command === Commands.searchInFolder).title;
  assert.equal(title, 'Search in Folder…');
});

test('the scope toggle has a keybinding while a search picker with a scope is open', () => {
  assert.deepEqual(manifest.contributes.keybindings, [
    { command: Commands.toggleSearchScope, key: 'alt+d', when: `inQuickOpen && ${SCOPE_CONTEXT}` },
  ]);
});

test('every setting the code reads is contributed with a description', () => {
  getSettings();
  assert.ok(mock.accessed.size >= 10);
  // Removed settings the code still reads, so what a user set keeps meaning what it meant.
  const removed = new Set(['fisk.search.languageModelExpansion']);
  for (const key of [...mock.accessed].filter((k) => !removed.has(k))) {
    assert.ok(properties[key], `${key} is contributed`);
    assert.ok((properties[key].markdownDescription ?? properties[key].description ?? '').length > 20, `${key} has a description`);
  }
  assert.ok(properties['fisk.trace.server'], 'the client reads fisk.trace.server itself');
});

test('defaults agree with the code', () => {
  assert.equal(properties['fisk.server.command'].default, DEFAULT_SERVER_COMMAND);
  assert.equal(properties['fisk.topK'].default, DEFAULT_TOP_K);
  assert.equal(properties['fisk.topK'].maximum, MAX_RESULTS, 'the picker offers more results up to the server\'s limit');
  assert.equal(properties['fisk.workspaceSymbols'].default, false);
  assert.deepEqual(properties['fisk.trace.server'].enum, ['off', 'messages', 'verbose']);
});

test('the language model tool is contributed under the registered name', () => {
  const [tool] = manifest.contributes.languageModelTools;
  assert.equal(tool.name, TOOL_NAME);
  assert.deepEqual(tool.inputSchema.required, ['query']);
  assert.ok(manifest.activationEvents.includes(`onLanguageModelTool:${TOOL_NAME}`));
});

test('engines.vscode is what vscode-languageclient needs, and @types/vscode matches it', () => {
  const client = JSON.parse(fs.readFileSync(path.join(root, 'node_modules/vscode-languageclient/package.json'), 'utf8'));
  assert.equal(manifest.engines.vscode, client.engines.vscode);
  assert.equal(`^${manifest.devDependencies['@types/vscode']}`, manifest.engines.vscode);
  assert.equal(manifest.main, './dist/extension.js');
});
