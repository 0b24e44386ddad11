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
    openAlso: async (h) => (others.push(h), h.also?.[0]?.citation),
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
  const { picker, calls, expansions } = setupExpanding();
  void picker.show('how do I stop retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.deepEqual(calls.map((c) => c.query), ['how do I stop retries'], 'one search');
  assert.equal(expansions.length, 1, 'one expansion');
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
  copies.also = [
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

function setupExpanding() {
  const base = setup();
  const expansions: { query: string; token: { isCancellationRequested: boolean }; answer: ReturnType<typeof deferred<string[] | undefined>> }[] = [];
  const alsoCalls: { also?: string[] }[] = [];
  const picker = new SearchPicker({
    search: (args, token) => {
      alsoCalls.push({ also: args.also });
      const answer = deferred<SearchResult>();
      base.calls.push({ query: args.query, paths: args.paths, token, answer });
      return answer.promise;
    },
    expand: (query, token) => {
      const answer = deferred<string[] | undefined>();
      expansions.push({ query, token, answer });
      return answer.promise;
    },
    open: async () => undefined,
    openAlso: async () => undefined,
    copy: async () => undefined,
    act: async () => undefined,
  });
  return { picker, calls: base.calls, expansions, alsoCalls };
}

test('with expansion: the plain results show at once, then the list is refined with the strings', async () => {
  const { picker, calls, expansions, alsoCalls } = setupExpanding();
  void picker.show('how do I stop retries');
  assert.equal(expansions.length, 1, 'the expansion starts with the plain search');
  calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
  await flush();
  assert.deepEqual(current().items.map((i) => i.description), ['docs/plain.md:1'], 'plain results at once');
  assert.equal(current().busy, true, 'still busy while the strings are awaited');
  expansions[0].answer.resolve(['retry max attempts', 'Set maxAttempts to 1.', 'disable retries']);
  await flush();
  assert.deepEqual(alsoCalls, [{ also: undefined }, { also: ['retry max attempts', 'Set maxAttempts to 1.', 'disable retries'] }]);
  assert.equal(calls[1].query, 'how do I stop retries');
  calls[1].answer.resolve(result([hit('docs/refined.md#3', 0), hit('docs/plain.md#1', 0)]));
  await flush();
  assert.deepEqual(current().items.map((i) => i.description), ['docs/refined.md:1', 'docs/plain.md:1']);
  assert.equal(current().busy, false);
  nodeMock.timers.reset();
});

test('the picker view follows the list the workbench shows: its active row, and whether it is the refined one', async () => {
  const { picker, calls, expansions } = setupExpanding();
  const seen: PickerView[] = [];
  const sub = onDidChangePicker((view) => seen.push(view));
  void picker.show('how do I stop retries');
  calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
  await flush();
  expansions[0].answer.resolve(['k']);
  await flush();
  calls[1].answer.resolve(result([hit('docs/refined.md#3', 0), hit('docs/plain.md#1', 0)]));
  await flush();
  sub.dispose();
  assert.deepEqual(
    seen.map((v) => [v.active, v.refined, v.citations]),
    [
      ['docs/plain.md#1', false, ['docs/plain.md#1']],
      ['docs/refined.md#3', true, ['docs/refined.md#3', 'docs/plain.md#1']],
    ],
  );
  assert.equal(seen[1].query, 'how do I stop retries');
  assert.equal(seen[1].title, 'Fisk: Search Knowledge — lexical');
  nodeMock.timers.reset();
});

test('with expansion: no strings, a failed refined search or one with nothing keeps the plain results', async () => {
  for (const outcome of ['none', 'fails', 'empty', 'early'] as const) {
    reset();
    const { picker, calls, expansions } = setupExpanding();
    void picker.show('how do I stop retries');
    if (outcome !== 'early') {
      calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
      await flush();
    }
    expansions[0].answer.resolve(outcome === 'none' ? undefined : ['k']);
    await flush();
    if (outcome === 'fails') {
      calls[1].answer.reject(new Error('also: too many'));
    } else if (outcome === 'empty' || outcome === 'early') {
      calls[1].answer.resolve(result([]));
    }
    await flush();
    if (outcome === 'early') {
      calls[0].answer.resolve(result([hit('docs/plain.md#1', 0)]));
      await flush();
    }
    assert.deepEqual(current().items.map((i) => i.description), ['docs/plain.md:1'], outcome);
    assert.equal(current().busy, false, outcome);
    assert.equal(calls.length, outcome === 'none' ? 1 : 2, outcome);
  }
  nodeMock.timers.reset();
});

test('with expansion: a newer query cancels the older expansion and its late strings are not searched', async () => {
  const { picker, calls, expansions } = setupExpanding();
  void picker.show();
  current().type('how do I stop retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  current().type('how do I start retries');
  nodeMock.timers.tick(SEARCH_DELAY_MS);
  assert.equal(expansions[0].token.isCancellationRequested, true);
  expansions[0].answer.resolve(['late']);
  await flush();
  assert.deepEqual(calls.map((c) => c.query), ['how do I stop retries', 'how do I start retries'], 'no search for the old strings');
  nodeMock.timers.reset();
});

const RELEASES = { folder: Uri.file('/ws/docs/releases'), label: 'docs/releases' };

test('a scope: the title button switches between the whole workspace and the folder, and searches again', async () => {
  const { picker, calls } = setup();
  const shown = picker.show('upgrade', { scope: RELEASES as never });
  assert.deepEqual([calls[0].query, calls[0].paths], ['upgrade', undefined], 'starts on the whole workspace');
  assert.equal(current().placeholder, 'Search the workspace docs');
  assert.deepEqual(current().buttons.map((b: any) => [b.iconPath.id, b.tooltip]), [['folder', 'Search only in docs/releases']]);
  current().titleButton.fire(current().buttons[0]);
  assert.equal(calls[0].token.isCancellationRequested, true, 'the unscoped search is cancelled');
  assert.deepEqual([calls[1].query, calls[1].paths], ['upgrade', ['/ws/docs/releases']], 'the folder, as an absolute path');
  assert.equal(current().placeholder, 'Search the docs in docs/releases');
  assert.equal(current().title, 'Fisk: Search Knowledge in docs/releases');
  assert.deepEqual(current().buttons.map((b: any) => [b.iconPath.id, b.tooltip]), [['root-folder', 'Search the whole workspace']]);
  calls[1].answer.resolve(result([hit('docs/releases/2.1/upgrading.md#0', 0)]));
  await flush();
  assert.equal(current().title, 'Fisk: Search Knowledge in docs/releases — lexical');
  assert.equal(picker.toggleScope(), true, 'the command does what the button does');
  assert.deepEqual(calls[2].paths, undefined);
  assert.equal(current().placeholder, 'Search the workspace docs');
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
  const { picker, calls, expansions } = setupExpanding();
  void picker.show('how do I upgrade', { scope: RELEASES as never, scoped: true });
  expansions[0].answer.resolve(['k']);
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
