import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { FakeLanguageClient } from './mock/languageclient';
import { mock, window } from './mock/vscode';
import { fakeServerExecutable, flush, reset } from './helpers';
import { IndexStatus } from '../../common/protocol';
import { FiskServer } from '../../common/server';
import { COVERAGE_POLL_MS, StatusBar, statusView, tierKind } from '../../common/status';

beforeEach(reset);

test('the tier kind comes from the first word of the tier line', () => {
  assert.equal(tierKind('lexical'), 'lexical');
  assert.equal(tierKind('hybrid (all-minilm-l6-v2, 384 dimensions)'), 'hybrid');
  assert.equal(tierKind('Degraded: embeddings endpoint unreachable'), 'degraded');
  assert.equal(tierKind('something else'), undefined);
});

test('a missing server shows an error item whose tooltip has the install command', () => {
  const view = statusView({ kind: 'missing', command: 'fisk-ls' });
  assert.equal(view.text, '$(error) Fisk');
  assert.equal(view.severity, 'error');
  assert.match(view.tooltip, /`pipx install --force \.` in a checkout of the fisk-ls repository/);
});

function status(tier: string, documents: number, indexing = false): IndexStatus {
  return { tier, roots: [{ root: '/ws', store: '/cache/ws', documents, chunks: documents * 3 }], indexing };
}

async function started() {
  mock.settings['fisk.server.command'] = fakeServerExecutable();
  let answer = status('lexical', 2);
  FakeLanguageClient.handlers.set('fisk.knowledge.status', () => answer);
  const server = new FiskServer(window.createOutputChannel('Fisk', { log: true }) as never);
  const bar = new StatusBar(server);
  await server.restart();
  await flush();
  return { server, bar, item: mock.statusItems[0], client: FakeLanguageClient.instances[0], setAnswer: (s: IndexStatus) => (answer = s) };
}

test('the item shows the tier once the server runs, and clicking it shows the status', async () => {
  const { item } = await started();
  assert.equal(item.text, '$(book) Fisk: lexical');
  assert.match(item.tooltip, /\/ws: 2 documents, 6 chunks/);
  assert.equal(item.command, 'fisk.showStatus');
  assert.equal(item.visible, true);
});

test('an index run shows progress, then the refreshed counts', async () => {
  const { item, client, bar, setAnswer } = await started();
  const texts: string[] = [];
  bar.onDidChange((v) => texts.push(`${v.text} | ${v.tooltip.split('\n')[1] ?? ''}`));
  client.progress({ kind: 'begin', title: 'Indexing docs', message: '0/5 files' });
  client.progress({ kind: 'report', message: '3/5 files', percentage: 60 });
  assert.equal(item.text, '$(sync~spin) Fisk: 3/5 files');
  setAnswer(status('lexical', 5));
  client.progress({ kind: 'end', message: 'done' });
  await flush();
  assert.equal(item.text, '$(book) Fisk: lexical');
  assert.match(item.tooltip, /5 documents, 15 chunks/);
  assert.deepEqual(texts, [
    '$(sync~spin) Fisk: 0/5 files | Fisk: lexical',
    '$(sync~spin) Fisk: 3/5 files | Fisk: lexical',
    '$(book) Fisk: lexical | /ws: 2 documents, 6 chunks',
    '$(book) Fisk: lexical | /ws: 5 documents, 15 chunks',
  ]);
});

test('root errors and unbuilt roots show in the tooltip', () => {
  const running = { kind: 'running' } as const;
  const roots = [
    { root: '/a', store: '/s', documents: 0, chunks: 0, built: false, error: null },
    { root: '/b', store: '/s', documents: 1, chunks: 2, built: true, error: 'database is locked' },
  ];
  const view = statusView(running, { tier: 'lexical', roots, indexing: false });
  assert.match(view.tooltip, /\/a: 0 documents, 0 chunks \(not built yet\)/);
  assert.match(view.tooltip, /\/b: 1 documents, 2 chunks \(error: database is locked\)/);
});

test('a degraded tier is a warning', async () => {
  const { bar, item, setAnswer } = await started();
  setAnswer(status('degraded: embeddings endpoint unreachable', 2));
  await bar.refresh();
  assert.equal(item.text, '$(warning) Fisk: degraded');
  assert.equal(item.backgroundColor?.id, 'statusBarItem.warningBackground');
  assert.match(item.tooltip, /embeddings endpoint unreachable/);
});

test('a degraded search turns the item into a warning with the reason, until a search is fine again', async () => {
  const { bar, item } = await started();
  bar.noteSearch({ tier: 'degraded: embeddings down', status: 'ok', degraded: true, reason: 'connection refused by 127.0.0.1:9', results: [] });
  assert.equal(item.text, '$(warning) Fisk: degraded');
  assert.equal(item.backgroundColor?.id, 'statusBarItem.warningBackground');
  assert.match(item.tooltip, /search is degraded: connection refused by 127\.0\.0\.1:9/);
  await bar.refresh();
  assert.equal(item.text, '$(warning) Fisk: degraded', 'a status refresh does not hide it');
  bar.noteSearch({ tier: 'lexical', status: 'ok', degraded: false, reason: null, results: [] });
  assert.equal(item.text, '$(book) Fisk: lexical');
});

test('the item follows the server going away', async () => {
  const { server, item } = await started();
  await server.stop();
  assert.equal(item.text, '$(error) Fisk');
  assert.equal(item.backgroundColor?.id, 'statusBarItem.errorBackground');
});

function hybrid(...roots: [string, number, { embedded: number; chunks: number } | null | undefined][]): IndexStatus {
  return {
    tier: 'hybrid (all-minilm-l6-v2, 384d)',
    indexing: false,
    roots: roots.map(([root, chunks, vectors]) => ({ root, store: `/cache${root}`, documents: 3, chunks, ...(vectors === undefined ? {} : { vectors }) })),
  };
}

test('vectors filling in: the item shows the coverage over all roots, the tooltip each root', () => {
  const view = statusView({ kind: 'running' }, hybrid(['/a', 6000, { embedded: 2000, chunks: 6000 }], ['/b', 628, { embedded: 310, chunks: 628 }], ['/c', 9, null]));
  assert.equal(view.text, '$(book) Fisk: hybrid 2,310/6,628 embedded');
  const lines = view.tooltip.split('\n');
  assert.equal(lines[1], '/a: 3 documents, 6,000 chunks, 2,000/6,000 embedded');
  assert.equal(lines[2], '/b: 3 documents, 628 chunks, 310/628 embedded');
  assert.equal(lines[3], '/c: 3 documents, 9 chunks', 'a lexical root (vectors null) has no coverage');
  assert.equal(view.severity, 'normal');
});

test('fully embedded or lexical: no coverage in the item text', () => {
  assert.equal(statusView({ kind: 'running' }, hybrid(['/a', 5, { embedded: 5, chunks: 5 }])).text, '$(book) Fisk: hybrid');
  assert.match(statusView({ kind: 'running' }, hybrid(['/a', 5, { embedded: 5, chunks: 5 }])).tooltip, /\/a: 3 documents, 5 chunks, 5\/5 embedded/);
  assert.equal(statusView({ kind: 'running' }, { ...hybrid(['/a', 5, undefined]), tier: 'lexical' }).text, '$(book) Fisk: lexical');
});

test('while vectors fill in, the status is polled until every chunk is embedded', async (t) => {
  t.mock.timers.enable({ apis: ['setTimeout'] });
  const { item, setAnswer, bar: statusBar } = await started();
  setAnswer(hybrid(['/ws', 100, { embedded: 10, chunks: 100 }]));
  await statusBar.refresh();
  assert.equal(item.text, '$(book) Fisk: hybrid 10/100 embedded');
  setAnswer(hybrid(['/ws', 100, { embedded: 60, chunks: 100 }]));
  t.mock.timers.tick(COVERAGE_POLL_MS);
  await flush();
  assert.equal(item.text, '$(book) Fisk: hybrid 60/100 embedded');
  setAnswer(hybrid(['/ws', 100, { embedded: 100, chunks: 100 }]));
  t.mock.timers.tick(COVERAGE_POLL_MS);
  await flush();
  assert.equal(item.text, '$(book) Fisk: hybrid');
  const requests = FakeLanguageClient.instances[0].requests.length;
  t.mock.timers.tick(COVERAGE_POLL_MS * 3);
  await flush();
  assert.equal(FakeLanguageClient.instances[0].requests.length, requests, 'no polling once complete');
});
