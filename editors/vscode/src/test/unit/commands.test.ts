import * as assert from 'node:assert/strict';
import { beforeEach, mock as nodeMock, test } from 'node:test';
import { FakeLanguageClient } from './mock/languageclient';
import { FakeChatModel, FakeDocument, mock, Position, Selection, TextEditorRevealType, Uri } from './mock/vscode';
import { fakeServerExecutable, flush, hit, reset, result } from './helpers';
import { commandViews } from './helpers';
import { registerCommands } from '../../common/commands';
import { createLog } from '../../common/log';
import { FiskServer } from '../../common/server';
import { StatusBar } from '../../common/status';

beforeEach(reset);

const DOC = Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n');

async function activateWith(command?: string) {
  mock.settings['fisk.server.command'] = command ?? fakeServerExecutable();
  mock.documents.set('/ws/docs/install.md', DOC);
  FakeLanguageClient.handlers.set('fisk.knowledge.status', () => ({
    tier: 'lexical',
    roots: [{ root: '/ws', store: '/c', documents: 3, chunks: 9 }],
    indexing: false,
  }));
  const server = new FiskServer(createLog());
  const status = new StatusBar(server);
  registerCommands(server, status, commandViews());
  await server.restart();
  await flush();
  return { server, client: FakeLanguageClient.instances[0] };
}

function run(command: string, ...args: unknown[]): Promise<any> {
  const callback = mock.commands.get(command);
  assert.ok(callback, `${command} is registered`);
  return Promise.resolve(callback(...args));
}

test('reindex and rebuild send fisk.knowledge.reindex and report the counts', async () => {
  const { client } = await activateWith();
  const answer = { files: 4, added: 1, updated: 2, skipped: 1, removed: 0, chunks: 12 };
  FakeLanguageClient.handlers.set('fisk.knowledge.reindex', () => answer);
  assert.deepEqual(await run('fisk.reindex'), answer);
  assert.deepEqual(await run('fisk.rebuild'), answer);
  const sent = client.requests.filter((r) => r.command === 'fisk.knowledge.reindex').map((r) => r.args);
  assert.deepEqual(sent, [[{ rebuild: false }], [{ rebuild: true }]]);
  const infos = mock.messages.filter((m) => m.level === 'info').map((m) => m.text);
  assert.deepEqual(infos, [
    'Fisk: reindexed 4 files: 1 added, 2 updated, 1 unchanged, 0 removed; 12 chunks.',
    'Fisk: rebuilt 4 files: 1 added, 2 updated, 1 unchanged, 0 removed; 12 chunks.',
  ]);
});

test('show status reports tier and counts', async () => {
  await activateWith();
  const status = await run('fisk.showStatus');
  assert.equal(status.tier, 'lexical');
  assert.equal(mock.messages.at(-1)?.text, 'Fisk: lexical; 3 documents, 9 chunks.');
});

test('with no server, commands say why and how to install it', async () => {
  await activateWith('/nonexistent/fisk-ls');
  mock.messages = [];
  assert.equal(await run('fisk.showStatus'), undefined);
  assert.equal(await run('fisk.reindex'), undefined);
  assert.equal(mock.messages.length, 2);
  for (const m of mock.messages) {
    assert.equal(m.level, 'error');
    assert.match(m.text, /`pipx install --force \.` in a checkout of the fisk-ls repository/);
    assert.deepEqual(m.actions, ['Copy Install Command']);
  }
});

test('open citation with an argument opens and selects the cited lines', async () => {
  const { client } = await activateWith();
  FakeLanguageClient.handlers.set('fisk.knowledge.show', (args) => ({
    citation: args.citation,
    section: 'Install',
    content: '…',
    stale: false,
    location: hit('docs/install.md#2', 4, 'Install', 3).location,
  }));
  const shown = await run('fisk.openCitation', ' docs/install.md#2 ');
  assert.equal(shown.citation, 'docs/install.md#2');
  assert.deepEqual(client.requests.at(-1)?.args, [{ citation: 'docs/install.md#2' }]);
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.active.line, selection.anchor.line], [4, 6]);
  assert.equal(mock.messages.length, 0);
});

test('open citation prefills the input box from the selection and warns when stale', async () => {
  await activateWith();
  FakeLanguageClient.handlers.set('fisk.knowledge.show', () => ({
    citation: 'docs/install.md#2',
    section: 'Install',
    content: '…',
    stale: true,
    location: hit('docs/install.md#2', 1).location,
  }));
  mock.activeTextEditor = {
    document: new FakeDocument(Uri.file('/ws/notes.md'), 'see docs/install.md#2 here'),
    selection: new Selection(new Position(0, 4), new Position(0, 21)),
  };
  mock.inputAnswer = 'docs/install.md#2';
  await run('fisk.openCitation');
  const options = mock.inputOptions[0];
  assert.equal(options.value, 'docs/install.md#2');
  assert.equal(options.validateInput('docs/install.md#2'), undefined);
  assert.match(options.validateInput('install'), /relpath#ordinal/);
  assert.match(mock.messages[0].text, /changed since it was indexed/);
});

test('an unknown citation shows the server error', async () => {
  await activateWith();
  FakeLanguageClient.handlers.set('fisk.knowledge.show', () => {
    throw Object.assign(new Error('no chunk matches docs/none.md#9'), { code: -32602 });
  });
  assert.equal(await run('fisk.openCitation', 'docs/none.md#9'), undefined);
  assert.equal(mock.messages[0].level, 'error');
  assert.equal(mock.messages[0].text, 'Fisk: no chunk matches docs/none.md#9');
});

test('search: the picker sends the query alone (the server applies its configured topK) and opens the accepted hit', async () => {
  nodeMock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { client } = await activateWith();
    mock.settings['fisk.topK'] = 3;
    FakeLanguageClient.handlers.set('fisk.knowledge.search', () => result([hit('docs/install.md#2', 4)]));
    const done = run('fisk.search');
    const picker = mock.quickPicks[0];
    picker.type('install');
    nodeMock.timers.tick(150);
    await flush();
    assert.deepEqual(client.requests.at(-1)?.args, [{ query: 'install' }]);
    assert.equal(picker.items[0].description, 'docs/install.md:5');
    picker.button.fire({ item: picker.items[0], button: picker.items[0].buttons[0] });
    await flush();
    assert.equal(mock.clipboard, 'docs/install.md#2');
    picker.acceptItem(0);
    assert.equal(await done, 'docs/install.md#2');
    assert.equal(mock.shown[0].document.uri.fsPath, '/ws/docs/install.md');
    const selection = mock.shown[0].editor.selection;
    assert.deepEqual([selection.start.line, selection.end.line], [4, 4], 'the matched part (targetSelectionRange) is selected');
  } finally {
    nodeMock.timers.reset();
  }
});

test('fisk.search with expansion: the plain search, then expand: true; no chat model or provider none: the plain search only', async () => {
  nodeMock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { client } = await activateWith();
    FakeLanguageClient.handlers.set('fisk.knowledge.search', (args: { expand?: boolean }) =>
      args.expand ? result([hit('docs/refined.md#1', 0)], { expansion: 'used' }) : result([hit('docs/plain.md#1', 0)], { expansion: 'off' }),
    );
    const searches = () => client.requests.filter((r) => r.command === 'fisk.knowledge.search').map((r) => r.args[0]);
    const search = async (query: string) => {
      void run('fisk.search', query);
      for (let i = 0; i < 5; i++) await flush();
      const picker = mock.quickPicks.at(-1)!;
      picker.hide();
      return picker.items.map((i: { description: string }) => i.description);
    };
    assert.deepEqual(await search('how do I stop retries'), ['docs/plain.md:1'], 'the editor provider without a chat model: plain');
    assert.deepEqual(searches(), [{ query: 'how do I stop retries' }]);

    mock.chatModels = [new FakeChatModel()];
    assert.deepEqual(await search('how do I stop retries'), ['docs/refined.md:1'], 'with a chat model the rows are refined');
    assert.deepEqual(searches().slice(1), [{ query: 'how do I stop retries' }, { query: 'how do I stop retries', expand: true }]);

    mock.settings['fisk.expansion.provider'] = 'none';
    assert.deepEqual(await search('how do I stop retries'), ['docs/plain.md:1']);
    assert.equal(searches().length, 4, 'provider none: one plain search');

    mock.settings['fisk.expansion.provider'] = 'openai';
    mock.chatModels = [];
    assert.deepEqual(await search('how do I stop retries'), ['docs/refined.md:1'], 'openai needs no editor model');
  } finally {
    nodeMock.timers.reset();
  }
});

test('the "also in N files" button opens a pick of the other copies; the chosen one opens on its matched lines, centred', async () => {
  nodeMock.timers.enable({ apis: ['setTimeout'] });
  try {
    await activateWith();
    mock.documents.set('/ws/docs/v2/install.md', DOC);
    const copies = hit('docs/install.md#2', 4);
    const other = hit('docs/v2/install.md#2', 10).location;
    other.targetSelectionRange = { start: { line: 12, character: 0 }, end: { line: 14, character: 0 } };
    copies.copies = [{ citation: 'docs/v2/install.md#2', location: other }];
    FakeLanguageClient.handlers.set('fisk.knowledge.search', () => result([copies]));
    mock.quickPickAnswer = (items) => items[0];
    const done = run('fisk.search', 'install');
    await flush();
    const picker = mock.quickPicks[0];
    const item = picker.items[0];
    picker.button.fire({ item, button: item.buttons[0] });
    assert.equal(await done, 'docs/v2/install.md#2');
    const [pick] = mock.shownPicks;
    assert.equal(pick.options.title, 'Fisk: Install > pip, also in 1 file');
    assert.deepEqual(pick.items.map((i: { label: string }) => i.label), ['$(file) docs/v2/install.md']);
    // The first editor shown is the focused row's preview; the last is the copy that was opened.
    const opened = mock.shown[mock.shown.length - 1];
    assert.equal(opened.document.uri.fsPath, '/ws/docs/v2/install.md');
    assert.equal(opened.options.preserveFocus, undefined, 'the opened copy takes the focus');
    const { selection } = opened.editor;
    assert.deepEqual([selection.start.line, selection.end.line], [12, 13], "the copy's matched lines");
    assert.equal(mock.revealTypes[mock.revealTypes.length - 1], TextEditorRevealType.InCenter);
  } finally {
    nodeMock.timers.reset();
  }
});

test('fisk.openAlso refuses an argument that is not a search result', async () => {
  await activateWith();
  assert.equal(await run('fisk.openAlso', 'docs/install.md#2'), undefined);
  assert.match(mock.messages[0].text, /fisk\.openAlso expects a search result/);
  const lonely = hit('docs/install.md#2', 4);
  assert.equal(await run('fisk.openAlso', lonely), undefined);
  assert.match(mock.messages[1].text, /has no other locations/);
  assert.equal(mock.shownPicks.length, 0);
});

test('Search in Folder… keeps the picker to the folder (its absolute path as paths), starting from the selection', async () => {
  nodeMock.timers.enable({ apis: ['setTimeout'] });
  try {
    const { client } = await activateWith();
    mock.workspaceFolders = [{ uri: Uri.file('/ws'), name: 'ws', index: 0 }];
    mock.activeTextEditor = {
      document: new FakeDocument(Uri.file('/ws/README.md'), 'upgrade notes'),
      selection: new Selection(new Position(0, 0), new Position(0, 7)),
    };
    FakeLanguageClient.handlers.set('fisk.knowledge.search', () => result([hit('docs/releases/2.1/upgrading.md#0', 0)]));
    void run('fisk.searchInFolder', Uri.file('/ws/docs/releases'));
    await flush();
    const searches = () => client.requests.filter((r) => r.command === 'fisk.knowledge.search').map((r) => r.args[0]);
    assert.deepEqual(searches(), [{ query: 'upgrade', paths: ['/ws/docs/releases'] }]);
    const picker = mock.quickPicks[0];
    assert.equal(picker.title, 'Fisk: Search Knowledge in docs/releases — lexical');
    assert.equal(picker.placeholder, 'Search the docs in docs/releases (tag:NAME keeps to tagged pages)');
    await run('fisk.toggleSearchScope');
    await flush();
    assert.deepEqual(searches().at(-1), { query: 'upgrade' }, 'the toggle widens it to the workspace');
    picker.hide();

    // Fisk: Search Knowledge offers the active file's folder; the workspace folder itself is named by its name.
    void run('fisk.search', 'upgrade');
    await run('fisk.toggleSearchScope');
    await flush();
    assert.deepEqual(searches().at(-1), { query: 'upgrade', paths: ['/ws'] });
    assert.equal(mock.quickPicks[1].placeholder, 'Search the docs in ws (tag:NAME keeps to tagged pages)');
    mock.quickPicks[1].hide();

    assert.equal(await run('fisk.searchInFolder', Uri.file('/elsewhere')), undefined);
    assert.equal(mock.quickPicks.length, 2, 'no picker for a folder outside the workspace');
    assert.match(mock.messages.at(-1)?.text ?? '', /^Fisk: \/elsewhere is not in a workspace folder/);
  } finally {
    nodeMock.timers.reset();
  }
});

test('search starts from a short one-line selection', async () => {
  await activateWith();
  mock.activeTextEditor = {
    document: new FakeDocument(Uri.file('/ws/notes.md'), 'alpha beta\ngamma'),
    selection: new Selection(new Position(0, 0), new Position(0, 10)),
  };
  FakeLanguageClient.handlers.set('fisk.knowledge.search', () => result([]));
  void run('fisk.search');
  assert.equal(mock.quickPicks[0].value, 'alpha beta');
  mock.quickPicks[0].hide();
  mock.activeTextEditor.selection = new Selection(new Position(0, 0), new Position(1, 5));
  void run('fisk.search');
  assert.equal(mock.quickPicks[1].value, '', 'a multi-line selection is not a query');
  mock.quickPicks[1].hide();
});

test('restart and show log are wired', async () => {
  await activateWith();
  await run('fisk.restartServer');
  assert.equal(FakeLanguageClient.instances.length, 2);
  await run('fisk.showLog');
  assert.deepEqual(mock.executed.at(-1), { command: '<output.show>', args: ['Fisk'] });
});
