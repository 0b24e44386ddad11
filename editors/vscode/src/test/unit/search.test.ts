import * as assert from 'node:assert/strict';
import { beforeEach, mock as nodeMock, test } from 'node:test';
import { FakeQuickPick, mock, Uri } from './mock/vscode';
import { deferred, flush, hit, reset, result } from './helpers';
import { SearchHit, SearchResult, ServerNotRunningError } from '../../common/protocol';
import { onDidChangePicker, PickerView, SEARCH_DELAY_MS, SearchPicker } from '../../common/search';
import { Notice } from '../../common/searchItems';

interface Call {
  query: string;
  paths?: string[];
  token: { isCancellationRequested: boolean };
  answer: ReturnType<typeof deferred<SearchResult>>;
}

function setup() {
  const calls: Call[] = [];
  const opened: SearchHit[] = [];
  const others: SearchHit[] = [];
  const copied: string[] = [];
  const acted: Notice[] = [];
  const picker = new SearchPicker({
    search: ({ query, paths }, token) => {
      const answer = deferred<SearchResult>();
      calls.push({ query, paths, token, answer });
      return answer.promise;
    },
    open: async (h) => opened.push(h),
    openAlso: async (h) => (others.push(h), h.copies?.[0]?.citation),
    copy: async (c) => copied.push(c),
    act: async (n) => acted.push(n),
  });
  return { picker, calls, opened, others, copied, acted };
}

function current(): FakeQuickPick<any> {
  return mock.quickPicks[mock.quickPicks.length - 1];
}

beforeEach(() => {
  reset();
  nodeMock.timers.enable({ apis: ['setTimeout'] });
});

test('typing is debounced: one request after the pause, for the last value', () => {
  const { picker, calls } = setup();
  void picker.show();
  for (const value of ['i', 'in', 'ins', 'install']) {
    current().type(value);
    nodeMock.timers.tick(50);
  }
  assert.equal(calls.length, 0);
  nodeMock.timers.tick(SEARCH_DELAY_MS - 50);
  assert.deepEqual(calls.map((c) => c.query), ['install']);
  assert.equal(current().busy, true);
  nodeMock.timers.reset();
});

test('a newer query cancels the older request and a late answer is ignored', async () => {
  const { picker, calls } = setup();
  void picker.show();
  current().type('old');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  current().type('new');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls[0].token.isCancellationRequested, true);
  assert.equal(calls[1].token.isCancellationRequested, false);
  calls[1].answer.resolve(result([hit('docs/new.md#1', 0)]));
  await flush();
  calls[0].answer.resolve(result([hit('docs/old.md#1', 0)]));
  await flush();
  assert.deepEqual(current().items.map((i) => i.description), ['docs/new.md:1']);
  assert.equal(current().busy, false);
  nodeMock.timers.reset();
});

test('an initial query searches at once; accepting opens the hit and resolves with it', async () => {
  const { picker, calls, opened } = setup();
  const shown = picker.show('install');
  assert.equal(calls[0].query, 'install');
  calls[0].answer.resolve(result([hit('docs/a.md#1', 0), hit('docs/b.md#2', 9)]));
  await flush();
  assert.equal(current().title, 'Fisk: Search Knowledge — lexical');
  current().acceptItem(1);
  assert.equal(await shown, 'docs/b.md#2');
  assert.deepEqual(opened.map((h) => h.citation), ['docs/b.md#2']);
  assert.equal(current().disposed, true);
  nodeMock.timers.reset();
});

test('the workbench reporting the initial query back as a value change does not search it again', async () => {
  const { picker, calls } = setupExpanding();
  void picker.show('how do I stop retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.deepEqual(calls.map((c) => c.query), ['how do I stop retries'], 'one search');
  assert.equal(calls[0].token.isCancellationRequested, false, 'the first search is not cancelled');
  current().type('how do I stop retrying');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  current().type('how do I stop retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls.length, 3, 'typing back to an earlier query searches it');
  nodeMock.timers.reset();
});

test('the item button copies the citation', async () => {
  const { picker, calls, copied } = setup();
  void picker.show('x');
  calls[0].answer.resolve(result([hit('docs/a.md#4', 0)]));
  await flush();
  current().button.fire({ item: current().items[0], button: current().items[0].buttons[0] });
  assert.deepEqual(copied, ['docs/a.md#4']);
  nodeMock.timers.reset();
});

test('a result with copies has an "also in N files" button that opens the pick of them instead', async () => {
  const { picker, calls, opened, others, copied } = setup();
  const shown = picker.show('x');
  const copies = hit('docs/v1/a.md#4', 0);
  copies.copies = [
    { citation: 'docs/v2/a.md#4', location: hit('docs/v2/a.md#4', 0).location },
    { citation: 'docs/v3/a.md#4', location: hit('docs/v3/a.md#4', 0).location },
  ];
  calls[0].answer.resolve(result([copies, hit('docs/b.md#1', 0)]));
  await flush();
  const [first, second] = current().items;
  assert.deepEqual(first.buttons.map((b: { tooltip: string }) => b.tooltip), ['Also in 2 files', 'Copy citation']);
  assert.deepEqual(second.buttons.map((b: { tooltip: string }) => b.tooltip), ['Copy citation']);
  current().button.fire({ item: first, button: first.buttons[1] });
  assert.deepEqual(copied, ['docs/v1/a.md#4'], 'the copy button is still there');
  current().button.fire({ item: first, button: first.buttons[0] });
  assert.equal(await shown, 'docs/v2/a.md#4', 'resolves with the location opened from the second pick');
  assert.deepEqual(others.map((h) => h.citation), ['docs/v1/a.md#4']);
  assert.deepEqual(opened, [], 'the result itself is not opened');
  assert.equal(current().disposed, true, 'the search picker made way for the second pick');
  nodeMock.timers.reset();
});

test('a failed request shows why, and accepting it runs its action', async () => {
  const { picker, calls, acted } = setup();
  const shown = picker.show('x');
  calls[0].answer.reject(new ServerNotRunningError('The fisk-ls server is not running (crashed).', 'failed'));
  await flush();
  assert.equal(current().items.length, 1);
  assert.match(current().items[0].detail, /crashed/);
  current().acceptItem(0);
  assert.equal(await shown, undefined);
  assert.deepEqual(acted.map((n) => n.action), ['restartServer']);
  nodeMock.timers.reset();
});

test('index not built: one row that offers to reindex', async () => {
  const { picker, calls } = setup();
  void picker.show('x');
  calls[0].answer.resolve(result([], { status: 'index_not_built' }));
  await flush();
  assert.equal(current().items.length, 1);
  assert.equal(current().items[0].notice.action, 'reindex');
  nodeMock.timers.reset();
});

test('clearing the query clears the list without a request; hiding cancels', () => {
  const { picker, calls } = setup();
  const shown = picker.show('x');
  current().type('');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls.length, 1);
  assert.equal(calls[0].token.isCancellationRequested, true);
  assert.deepEqual(current().items, []);
  current().type('y');
  current().hide();
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls.length, 1, 'no request after hiding');
  nodeMock.timers.reset();
  return shown.then((value) => assert.equal(value, undefined));
});

/** A picker whose searches ask for expansion (`expands`), recording every request with its `expand`. */
function setupExpanding(expands: () => boolean | Promise<boolean> = () => true) {
  const calls: (Call & { expand?: boolean })[] = [];
  const picker = new SearchPicker({
    search: (args, token) => {
      const answer = deferred<SearchResult>();
      calls.push({ query: args.query, paths: args.paths, expand: args.expand, token, answer });
      return answer.promise;
    },
    expands,
    open: async () => undefined,
    openAlso: async () => undefined,
    copy: async () => undefined,
    act: async () => undefined,
  });
  return { picker, calls };
}

const rows = () => current().items.map((i) => i.description);

test('with expansion: the plain rows show at once, then the same search with expand: true replaces them in place', async () => {
  const { picker, calls } = setupExpanding();
  void picker.show('how do I stop retries');
  assert.deepEqual(calls.map((c) => c.expand), [undefined], 'the plain request first, alone');
  calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)], { expansion: 'off' }));
  await flush();
  assert.deepEqual(rows(), ['docs/plain.md:1'], 'plain rows at once');
  assert.equal(current().busy, true, 'still busy while the expansion runs');
  assert.deepEqual(calls.map((c) => [c.query, c.expand]), [['how do I stop retries', undefined], ['how do I stop retries', true]]);
  calls[1].answer.resolve(result([hit('docs/refined.md#3', 0), hit('docs/plain.md#1', 0)], { expansion: 'used', expansionStrings: ['k', 'a', 'r'] }));
  await flush();
  assert.deepEqual(rows(), ['docs/refined.md:1', 'docs/plain.md:1']);
  assert.equal(current().title, 'Fisk: Search Knowledge — lexical · expanded by the language model');
  assert.equal(current().busy, false);
  nodeMock.timers.reset();
});

test('refining keeps the active row on the same citation when it is still listed, else the first row', async () => {
  for (const [moved, kept] of [
    [1, 'docs/b.md#2'],
    [2, 'docs/refined.md#3'],
  ] as const) {
    reset();
    const { picker, calls } = setupExpanding();
    void picker.show('how do I stop retries');
    calls[0].answer.resolve(result([hit('docs/a.md#1', 0), hit('docs/b.md#2', 0), hit('docs/c.md#3', 0)]));
    await flush();
    current().moveTo(moved);
    calls[1].answer.resolve(result([hit('docs/refined.md#3', 0), hit('docs/a.md#1', 0), hit('docs/b.md#2', 0)], { expansion: 'cached' }));
    await flush();
    assert.deepEqual(current().activeItems.map((i: any) => i.hit.citation), [kept], `moved to row ${moved}`);
  }
  nodeMock.timers.reset();
});

test('the picker view follows the list the workbench shows: its active row, and whether it is the refined one', async () => {
  const { picker, calls } = setupExpanding();
  const seen: PickerView[] = [];
  const sub = onDidChangePicker((view) => seen.push(view));
  void picker.show('how do I stop retries');
  calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
  await flush();
  calls[1].answer.resolve(result([hit('docs/refined.md#3', 0), hit('docs/plain.md#1', 0)], { expansion: 'used' }));
  await flush();
  sub.dispose();
  assert.deepEqual(seen.map((v) => [v.active, v.refined, v.citations]).at(0), ['docs/plain.md#1', false, ['docs/plain.md#1']]);
  assert.deepEqual(seen.map((v) => [v.active, v.refined, v.citations]).at(-1), ['docs/plain.md#1', true, ['docs/refined.md#3', 'docs/plain.md#1']]);
  assert.equal(seen.at(-1)?.expansion, 'used');
  assert.equal(seen.at(-1)?.query, 'how do I stop retries');
  assert.equal(seen.at(-1)?.title, 'Fisk: Search Knowledge — lexical · expanded by the language model');
  nodeMock.timers.reset();
});

test('expansion not needed, failed (a refused consent), off, or its request failing: the plain rows stay; a failure is named in the title', async () => {
  const cases: [string, (answer: Call['answer']) => void, string][] = [
    ['not needed', (a) => a.resolve(result([hit('docs/plain.md#1', 0)], { expansion: 'not needed' })), 'Fisk: Search Knowledge — lexical'],
    [
      'consent refused',
      (a) => a.resolve(result([hit('docs/plain.md#1', 0)], { expansion: 'failed: no consent to use the language model' })),
      'Fisk: Search Knowledge — lexical · not expanded (no consent to use the language model)',
    ],
    ['off', (a) => a.resolve(result([hit('docs/plain.md#1', 0)], { expansion: 'off' })), 'Fisk: Search Knowledge — lexical'],
    ['request fails', (a) => a.reject(new Error('expand: unknown argument')), 'Fisk: Search Knowledge — lexical'],
    ['used but empty', (a) => a.resolve(result([], { expansion: 'used' })), 'Fisk: Search Knowledge — lexical'],
  ];
  for (const [name, answer, title] of cases) {
    reset();
    const { picker, calls } = setupExpanding();
    void picker.show('how do I stop retries');
    calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
    await flush();
    current().moveTo(0);
    answer(calls[1].answer);
    await flush();
    assert.deepEqual(rows(), ['docs/plain.md:1'], name);
    assert.equal(current().title, title, name);
    assert.equal(current().busy, false, name);
  }
  nodeMock.timers.reset();
});

test('no expand request without expansion, or after a plain search that failed or found no index', async () => {
  for (const [name, expands, plain] of [
    ['expansion off', () => false, (a: Call['answer']) => a.resolve(result([hit('docs/plain.md#1', 0)]))],
    ['async off', async () => false, (a: Call['answer']) => a.resolve(result([hit('docs/plain.md#1', 0)]))],
    ['plain failed', () => true, (a: Call['answer']) => a.reject(new Error('boom'))],
    ['no index', () => true, (a: Call['answer']) => a.resolve(result([], { status: 'index_not_built' }))],
  ] as const) {
    reset();
    const { picker, calls } = setupExpanding(expands);
    void picker.show('how do I stop retries');
    plain(calls[0].answer);
    await flush();
    assert.equal(calls.length, 1, name);
    assert.equal(current().busy, false, name);
  }
  nodeMock.timers.reset();
});

test('with expansion: a newer query cancels both requests of the older one, and their late answers are ignored', async () => {
  const { picker, calls } = setupExpanding();
  void picker.show();
  current().type('how do I stop retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  calls[0].answer.resolve(result([hit('docs/old.md#1', 0)]));
  await flush();
  assert.equal(calls[1].expand, true);
  current().type('how do I start retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls[1].token.isCancellationRequested, true, 'the expand request is cancelled');
  calls[1].answer.resolve(result([hit('docs/late.md#1', 0)], { expansion: 'used' }));
  calls[2].answer.resolve(result([hit('docs/new.md#1', 0)]));
  await flush();
  assert.deepEqual(rows(), ['docs/new.md:1'], 'the late refinement is not shown');
  assert.deepEqual(calls.map((c) => [c.query, c.expand]).slice(2), [['how do I start retries', undefined], ['how do I start retries', true]]);

  current().type('how do I pause retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls[4].token.isCancellationRequested, false);
  current().type('how do I resume retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(calls[4].token.isCancellationRequested, true, 'a plain request still running is cancelled too');
  calls[4].answer.resolve(result([hit('docs/paused.md#1', 0)]));
  await flush();
  assert.equal(calls.filter((c) => c.query === 'how do I pause retries').length, 1, 'and its expansion never sent');
  nodeMock.timers.reset();
});

const RELEASES = { folder: Uri.file('/ws/docs/releases'), label: 'docs/releases' };

test('a scope: the title button switches between the whole workspace and the folder, and searches again', async () => {
  const { picker, calls } = setup();
  const shown = picker.show('upgrade', { scope: RELEASES as never });
  assert.deepEqual([calls[0].query, calls[0].paths], ['upgrade', undefined], 'starts on the whole workspace');
  assert.equal(current().placeholder, 'Search the workspace docs (tag:NAME keeps to tagged pages)');
  assert.deepEqual(current().buttons.map((b: any) => [b.iconPath.id, b.tooltip]), [['folder', 'Search only in docs/releases']]);
  current().titleButton.fire(current().buttons[0]);
  assert.equal(calls[0].token.isCancellationRequested, true, 'the unscoped search is cancelled');
  assert.deepEqual([calls[1].query, calls[1].paths], ['upgrade', ['/ws/docs/releases']], 'the folder, as an absolute path');
  assert.equal(current().placeholder, 'Search the docs in docs/releases (tag:NAME keeps to tagged pages)');
  assert.equal(current().title, 'Fisk: Search Knowledge in docs/releases');
  assert.deepEqual(current().buttons.map((b: any) => [b.iconPath.id, b.tooltip]), [['root-folder', 'Search the whole workspace']]);
  calls[1].answer.resolve(result([hit('docs/releases/2.1/upgrading.md#0', 0)]));
  await flush();
  assert.equal(current().title, 'Fisk: Search Knowledge in docs/releases — lexical');
  assert.equal(picker.toggleScope(), true, 'the command does what the button does');
  assert.deepEqual(calls[2].paths, undefined);
  assert.equal(current().placeholder, 'Search the workspace docs (tag:NAME keeps to tagged pages)');
  current().acceptItem(0);
  await shown;
  assert.equal(picker.toggleScope(), false, 'no picker, nothing to toggle');
  assert.deepEqual(
    mock.executed.filter((e) => e.command === 'setContext').map((e) => e.args),
    [['fisk.searchPickerHasScope', true], ['fisk.searchPickerHasScope', false]],
  );
  nodeMock.timers.reset();
});

test('a picker opened on its scope keeps every search to it, the refined one too; without a scope there is no button', async () => {
  const { picker, calls } = setupExpanding();
  void picker.show('how do I upgrade', { scope: RELEASES as never, scoped: true });
  calls[0].answer.resolve(result([hit('docs/releases/a.md#1', 0)]));
  await flush();
  assert.deepEqual(calls.map((c) => c.paths), [['/ws/docs/releases'], ['/ws/docs/releases']]);
  current().type('how do I downgrade');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.deepEqual(calls[2].paths, ['/ws/docs/releases'], 'typing keeps the scope');
  current().hide();
  void picker.show('x');
  assert.deepEqual(current().buttons, []);
  assert.equal(picker.toggleScope(), false);
  assert.equal(current().title, 'Fisk: Search Knowledge');
  nodeMock.timers.reset();
});
