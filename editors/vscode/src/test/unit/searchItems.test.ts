import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { ThemeIcon } from './mock/vscode';
import { hit, result } from './helpers';
import { ServerNotRunningError } from '../../common/protocol';
import { copiesOf, copiesText, failureNotice, HitButton, hitItem, lineReference, noticeFor, oneLine, otherItems, otherTitle, relpathOf, searchTitle } from '../../common/searchItems';

const button: HitButton = { iconPath: new ThemeIcon('copy') as never, tooltip: 'Copy citation', action: 'copy' };

test('an item shows the section, relpath:line (1-based) and a one-line snippet', () => {
  const item = hitItem(hit('docs/install.md#2', 12), button);
  assert.equal(item.label, '$(book) Install > pip');
  assert.equal(item.description, 'docs/install.md:13');
  assert.equal(item.detail, 'Run pip install fisk-ls to get docs/install.md');
  assert.equal(item.alwaysShow, true);
  assert.deepEqual(item.buttons, [button]);
});

test('the line shown is where the match starts (targetSelectionRange), not the chunk start', () => {
  const h = hit('docs/install.md#2', 12);
  h.location.targetSelectionRange = { start: { line: 15, character: 0 }, end: { line: 17, character: 0 } };
  assert.equal(lineReference(h), 'docs/install.md:16');
});

test('the detail is the snippet as plain text: no marks, no icon syntax', () => {
  const h = hit('docs/install.md#2', 12);
  h.snippet = 'Drain the radar relay before an upgrade.';
  h.highlights = [[0, 5], [16, 21]];
  assert.equal(hitItem(h, button).detail, 'Drain the radar relay before an upgrade.');
  h.snippet = 'see $(sync) here';
  assert.equal(hitItem(h, button).detail, 'see \\$(sync) here');
});

test('a result with copies says so in its description and gets a button for them', () => {
  const h = hit('docs/v1/up.md#0', 12);
  h.copies = [{ citation: 'docs/v2/up.md#0', location: hit('docs/v2/up.md#0', 30).location }];
  const item = hitItem(h, button);
  assert.equal(item.description, 'docs/v1/up.md:13 · also in 1 file');
  assert.deepEqual(item.buttons?.map((b) => (b as HitButton).action), ['copies', 'copy']);
  assert.equal(item.buttons?.[0].tooltip, 'Also in 1 file');
  assert.equal(hitItem(hit('docs/a.md#1', 0), button).description, 'docs/a.md:1', 'no copies, no mention');
});

test('copies in the same file are places, not files', () => {
  const h = hit('docs/a.md#1', 0);
  h.copies = [{ citation: 'docs/a.md#7', location: hit('docs/a.md#7', 40).location }, { citation: 'docs/b.md#7', location: hit('docs/b.md#7', 40).location }];
  assert.equal(copiesText(h), 'in 2 more places');
  assert.equal(copiesText(hit('docs/a.md#1', 0)), undefined);
});

test('a result of an older server lists its copies under also; copies wins when both are sent', () => {
  const old = hit('docs/v1/up.md#0', 12);
  old.also = [{ citation: 'docs/v2/up.md#0', location: hit('docs/v2/up.md#0', 30).location }];
  assert.deepEqual(copiesOf(old).map((c) => c.citation), ['docs/v2/up.md#0']);
  assert.equal(hitItem(old, button).description, 'docs/v1/up.md:13 · also in 1 file');
  assert.deepEqual(otherItems(old).map((i) => i.citation), ['docs/v2/up.md#0']);
  old.copies = [];
  assert.deepEqual(copiesOf(old), [], 'copies, even empty, is the answer of a current server');
});

test('the second pick lists each other location at its matched line', () => {
  const h = hit('docs/v1/up.md#0', 12, 'Upgrading > Before you upgrade');
  const other = hit('docs/v2/up.md#0', 30).location;
  other.targetSelectionRange = { start: { line: 36, character: 0 }, end: { line: 38, character: 0 } };
  h.copies = [{ citation: 'docs/v2/up.md#0', location: other }];
  const [item] = otherItems(h);
  assert.equal(item.label, '$(file) docs/v2/up.md');
  assert.equal(item.description, 'line 37');
  assert.equal(item.citation, 'docs/v2/up.md#0');
  assert.equal(item.location, other);
  assert.equal(otherTitle(h), 'Fisk: Upgrading > Before you upgrade, also in 1 file');
  assert.deepEqual(otherItems(hit('docs/a.md#1', 0)), []);
});

test('icon syntax in document text is shown as written', () => {
  const h = hit('docs/a.md#1', 0, 'Use $(sync) in labels');
  h.snippet = 'Write $(sync~spin) for a spinner';
  const item = hitItem(h, button);
  assert.equal(item.label, '$(book) Use \\$(sync) in labels');
  assert.equal(item.detail, 'Write \\$(sync~spin) for a spinner');
});

test('an item without a section falls back to the path', () => {
  assert.equal(hitItem(hit('notes.txt#1', 0, '  '), button).label, '$(book) notes.txt');
});

test('paths may contain #', () => {
  assert.equal(relpathOf('docs/c#/a.md#4'), 'docs/c#/a.md');
  assert.equal(lineReference(hit('docs/c#/a.md#4', 0)), 'docs/c#/a.md:1');
});

test('long snippets are cut at a word boundary', () => {
  const text = 'word '.repeat(100);
  const cut = oneLine(text, 40);
  assert.ok(cut.length <= 40, cut);
  assert.ok(cut.endsWith('word…'), cut);
});

test('every empty state says why', () => {
  const notBuilt = noticeFor(result([], { status: 'index_not_built' }), 'q');
  assert.equal(notBuilt?.action, 'reindex');
  assert.match(notBuilt?.label ?? '', /not been built/);
  assert.match(noticeFor(result([], { status: 'index_empty' }), 'q')?.detail ?? '', /fisk\.paths/);
  assert.match(noticeFor(result([], { status: 'no_terms' }), '!!')?.detail ?? '', /"!!" has no words to search for/);
  const running = noticeFor(
    result([], { status: 'index_empty', indexing: { files: 257, total: 1812 }, note: 'still indexing: 257 of 1,812 files; nothing is searchable yet' }),
    'q',
  );
  assert.equal(running?.label, '$(sync~spin) Still indexing');
  assert.match(running?.detail ?? '', /257 of 1,812 files/);
  assert.match(noticeFor(result([]), 'zebra')?.label ?? '', /No matches for "zebra"/);
  assert.equal(noticeFor(result([hit('a.md#1', 0)]), 'q'), undefined);
});

test('a degraded tier gives its reason in the empty state and the title', () => {
  const degraded = result([], { degraded: true, reason: 'embeddings endpoint unreachable', tier: 'degraded: embeddings endpoint unreachable' });
  assert.match(noticeFor(degraded, 'q')?.detail ?? '', /degraded: embeddings endpoint unreachable/);
  assert.match(searchTitle(degraded), /degraded: embeddings endpoint unreachable/);
  assert.equal(searchTitle(result([])), 'Fisk: Search Knowledge — lexical');
});

test('failures say the server is not running, or show the error', () => {
  const missing = failureNotice(new ServerNotRunningError('The language server "fisk-ls" was not found on PATH.', 'missing'));
  assert.equal(missing.action, 'openSettings');
  assert.match(missing.label, /not running/);
  assert.match(missing.detail, /not found on PATH/);
  assert.equal(failureNotice(new ServerNotRunningError('stopped', 'failed')).action, 'restartServer');
  const failed = failureNotice({ code: -32602, message: 'query must be a string' });
  assert.equal(failed.action, 'showLog');
  assert.match(failed.detail, /query must be a string/);
});
