import * as assert from 'node:assert/strict';
import { beforeEach, mock as nodeMock, test } from 'node:test';
import { FakeQuickPick, mock } from './mock/vscode';
import { deferred, flush, hit, reset, result } from './helpers';
import { SearchArgs, SearchHit, SearchResult } from '../../common/protocol';
import { KEEP_TOOLTIP, KeptList, onDidChangePicker, PickerView, SearchPicker } from '../../common/search';
import { parseQuery } from '../../common/searchItems';

interface Call {
  args: SearchArgs;
  answer: ReturnType<typeof deferred<SearchResult>>;
}

function setup(pageSize = 5) {
  const calls: Call[] = [];
  const previewed: string[] = [];
  const ended: boolean[] = [];
  const kept: KeptList[] = [];
  const opened: SearchHit[] = [];
  const picker = new SearchPicker({
    search: (args) => {
      const answer = deferred<SearchResult>();
      calls.push({ args, answer });
      return answer.promise;
    },
    open: async (h) => opened.push(h),
    openAlso: async () => undefined,
    copy: async () => undefined,
    act: async () => undefined,
    preview: async (h) => previewed.push(h.citation),
    endPreview: async (accepted) => ended.push(accepted),
    keep: (list) => kept.push(list),
    pageSize: () => pageSize,
  });
  return { picker, calls, previewed, ended, kept, opened };
}

function current(): FakeQuickPick<any> {
  return mock.quickPicks[mock.quickPicks.length - 1];
}

function hits(n: number, from = 0): SearchHit[] {
  return Array.from({ length: n }, (_, i) => hit(`docs/p${from + i}.md#1`, i, 'Sampling > Tail Sampling'));
}

beforeEach(() => {
  reset();
  nodeMock.timers.enable({ apis: ['setTimeout'] });
});

test('rows keep the server order: the workbench is told not to sort by label', async () => {
  const { picker, calls } = setup();
  void picker.show('otlp exporter endpoint');
  assert.equal((current() as unknown as { sortByLabel: boolean }).sortByLabel, false);
  const ordered = [hit('docs/z.md#1', 0, 'Zeta'), hit('docs/a.md#1', 0, 'otlp exporter endpoint'), hit('docs/m.md#1', 0, 'Middle')];
  calls[0].answer.resolve(result(ordered));
  await flush();
  assert.deepEqual(current().items.map((i) => i.hit?.citation), ['docs/z.md#1', 'docs/a.md#1', 'docs/m.md#1']);
  nodeMock.timers.reset();
});

test('rows with the same section are told apart by file and line', async () => {
  const { picker, calls } = setup();
  void picker.show('tail sampling');
  calls[0].answer.resolve(result(hits(3)));
  await flush();
  const rows = current().items;
  assert.equal(new Set(rows.slice(0, 3).map((r) => r.label)).size, 1);
  assert.equal(new Set(rows.slice(0, 3).map((r) => r.description)).size, 3);
  nodeMock.timers.reset();
});

test('a full page ends with "more results"; accepting it asks for the next page, keeps the picker open and focuses the first new row', async () => {
  const { picker, calls, opened } = setup(5);
  const views: PickerView[] = [];
  const sub = onDidChangePicker((v) => views.push(v));
  void picker.show('sampling');
  assert.equal(calls[0].args.topK, undefined, "the first page is the server's configured number");
  calls[0].answer.resolve(result(hits(5)));
  await flush();
  const more = current().items[5];
  assert.equal(more.label, '$(more) More results');
  assert.equal(views[views.length - 1].more, true);
  current().acceptItem(5);
  assert.equal(current().visible, true, 'the picker stays open');
  assert.equal(opened.length, 0);
  assert.equal(calls[1].args.topK, 10);
  calls[1].answer.resolve(result(hits(8)));
  await flush();
  assert.equal(current().items.length, 8, 'fewer than asked for: no more row');
  assert.equal(current().activeItems[0].hit.citation, 'docs/p5.md#1', 'the first new row is active');
  assert.equal(views[views.length - 1].topK, 10);
  sub.dispose();
  nodeMock.timers.reset();
});

test('"more results" stops at the server limit of 20', async () => {
  const { picker, calls } = setup(5);
  void picker.show('sampling');
  calls[0].answer.resolve(result(hits(20)));
  await flush();
  assert.equal(current().items.length, 20);
  nodeMock.timers.reset();
});

test('tag:NAME words become the tags argument and the title says so', async () => {
  assert.deepEqual(parseQuery('retry tag:otel backoff TAG:#sdk tag:otel'), { query: 'retry backoff', tags: ['otel', '#sdk'] });
  assert.deepEqual(parseQuery('tag:otel'), { query: '', tags: ['otel'] });
  const { picker, calls } = setup();
  void picker.show('tag:ops drain relay');
  assert.deepEqual(calls[0].args, { query: 'drain relay', tags: ['ops'] });
  calls[0].answer.resolve(result([hit('docs/a.md#1', 0)]));
  await flush();
  assert.match(current().title ?? '', /\[tag:ops\]/);
  current().type('tag:ops');
  nodeMock.timers.runAll();
  assert.equal(calls.length, 1, 'tags alone do not search');
  nodeMock.timers.reset();
});

test('moving through rows previews each; cancelling ends the preview unaccepted, accepting ends it accepted', async () => {
  const { picker, calls, previewed, ended } = setup();
  const shown = picker.show('sampling');
  calls[0].answer.resolve(result(hits(3)));
  await flush();
  current().moveTo(2);
  assert.deepEqual(previewed, ['docs/p0.md#1', 'docs/p2.md#1']);
  current().hide();
  await shown;
  assert.deepEqual(ended, [false]);
  const again = picker.show('sampling');
  calls[1].answer.resolve(result(hits(3)));
  await flush();
  current().acceptItem(1);
  assert.equal(await again, 'docs/p1.md#1');
  assert.deepEqual(ended, [false, true]);
  nodeMock.timers.reset();
});

test('the pin button keeps the list in the results view; with `keep` an accept keeps it too', async () => {
  const { picker, calls, kept } = setup();
  const shown = picker.show('tag:ops sampling');
  calls[0].answer.resolve(result(hits(2)));
  await flush();
  const pin = (current().buttons as { tooltip: string }[]).find((b) => b.tooltip === KEEP_TOOLTIP);
  assert.ok(pin, 'a pin button');
  current().titleButton.fire(pin);
  await shown;
  assert.equal(kept.length, 1);
  assert.deepEqual([kept[0].query, kept[0].tags, kept[0].result.results.length], ['sampling', ['ops'], 2]);
  const keeping = picker.show('sampling', { keep: true });
  calls[1].answer.resolve(result(hits(2)));
  await flush();
  current().acceptItem(0);
  await keeping;
  assert.equal(kept.length, 2);
  nodeMock.timers.reset();
});
