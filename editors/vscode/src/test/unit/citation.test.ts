import * as assert from 'node:assert/strict';
import { beforeEach, test } from 'node:test';
import { FakeDocument, mock, Position, Selection, TextEditorRevealType, Uri } from './mock/vscode';
import { reset } from './helpers';
import { citationFromEditor, citedLines, openLocation, openMatch, parseCitation } from '../../common/citation';

beforeEach(reset);

test('citations are normalised; the last # splits', () => {
  assert.equal(parseCitation('docs/install.md#3'), 'docs/install.md#3');
  assert.equal(parseCitation('  `docs/install.md#3`. '), 'docs/install.md#3');
  assert.equal(parseCitation('docs/c#/notes.md#12'), 'docs/c#/notes.md#12');
  assert.equal(parseCitation('docs/install.md#03'), 'docs/install.md#3');
  assert.equal(parseCitation('[docs/install.md#3]'), 'docs/install.md#3');
});

test('things that are not citations are rejected', () => {
  for (const bad of ['', 'docs/install.md', '#3', 'docs/install.md#', 'docs/install.md#x', 'docs/a\nb.md#1']) {
    assert.equal(parseCitation(bad), undefined, bad);
  }
});

test('cited lines: the end is exclusive at the start of the next line', () => {
  assert.deepEqual(citedLines({ start: { line: 4, character: 0 }, end: { line: 9, character: 0 } }), { first: 4, last: 8 });
  assert.deepEqual(citedLines({ start: { line: 4, character: 0 }, end: { line: 4, character: 0 } }), { first: 4, last: 4 });
  assert.deepEqual(citedLines({ start: { line: 2, character: 0 }, end: { line: 5, character: 7 } }), { first: 2, last: 5 });
});

function editor(text: string, selection: Selection) {
  return { document: new FakeDocument(Uri.file('/ws/x.md'), text), selection };
}

test('the prefill comes from the selection, else from the citation under the cursor', () => {
  const text = 'see docs/install.md#3 for details';
  assert.equal(citationFromEditor(editor(text, new Selection(new Position(0, 4), new Position(0, 21))) as never), 'docs/install.md#3');
  assert.equal(citationFromEditor(editor(text, new Selection(new Position(0, 10), new Position(0, 10))) as never), 'docs/install.md#3');
  assert.equal(citationFromEditor(editor(text, new Selection(new Position(0, 26), new Position(0, 26))) as never), '');
  assert.equal(citationFromEditor(undefined), '');
});

test('opening a location selects the cited lines with the cursor on the first', async () => {
  mock.documents.set('/ws/docs/a.md', Array.from({ length: 12 }, (_, i) => `line ${i}`).join('\n'));
  await openLocation({
    targetUri: 'file:///ws/docs/a.md',
    targetRange: { start: { line: 3, character: 0 }, end: { line: 6, character: 0 } },
    targetSelectionRange: { start: { line: 3, character: 0 }, end: { line: 3, character: 6 } },
  });
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.active.line, selection.active.character], [3, 0]);
  assert.deepEqual([selection.anchor.line, selection.anchor.character], [5, 'line 5'.length]);
  assert.equal(mock.revealed[0].start.line, 3);
  assert.equal(mock.revealTypes[0], TextEditorRevealType.InCenterIfOutsideViewport, 'a citation scrolls only when off screen');
});

test('opening a search hit selects the matched lines and reveals them centred', async () => {
  mock.documents.set('/ws/docs/a.md', Array.from({ length: 80 }, (_, i) => `line ${i}`).join('\n'));
  await openMatch({
    targetUri: 'file:///ws/docs/a.md',
    targetRange: { start: { line: 40, character: 0 }, end: { line: 60, character: 0 } },
    targetSelectionRange: { start: { line: 52, character: 0 }, end: { line: 55, character: 0 } },
  });
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.active.line, selection.anchor.line, selection.anchor.character], [52, 54, 'line 54'.length]);
  assert.deepEqual([mock.revealed[0].start.line, mock.revealed[0].end.line], [52, 54], 'the matched lines are revealed');
  assert.equal(mock.revealTypes[0], TextEditorRevealType.InCenter);
});

test('a search hit puts the cursor on its first matched word: the start line and character (UTF-16, as vscode.Position)', async () => {
  const line = 'Après 🛰 the storm, the kittiwake beacon needs a reset.';
  mock.documents.set('/ws/docs/a.md', ['# Beacon', '', line, 'second line', '', 'after'].join('\n'));
  const character = line.indexOf('kittiwake'); // UTF-16 code units: the satellite counts 2
  assert.equal(character, Array.from(line).indexOf('k') + 1);
  await openMatch({
    targetUri: 'file:///ws/docs/a.md',
    targetRange: { start: { line: 0, character: 0 }, end: { line: 6, character: 0 } },
    targetSelectionRange: { start: { line: 2, character }, end: { line: 4, character: 0 } },
  });
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.active.line, selection.active.character], [2, character], 'cursor on "kittiwake"');
  assert.deepEqual([selection.anchor.line, selection.anchor.character], [3, 'second line'.length], 'to the end of the matched lines');
  assert.deepEqual([mock.revealed[0].start.line, mock.revealed[0].start.character], [2, character]);
});

test('a start character past the end of its line is clamped to the line end', async () => {
  mock.documents.set('/ws/docs/a.md', 'one\ntwo\nthree');
  await openMatch({
    targetUri: 'file:///ws/docs/a.md',
    targetRange: { start: { line: 0, character: 0 }, end: { line: 3, character: 0 } },
    targetSelectionRange: { start: { line: 1, character: 40 }, end: { line: 2, character: 0 } },
  });
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.active.line, selection.active.character], [1, 3]);
});

test('a range past the end of the file is clamped to the last line', async () => {
  mock.documents.set('/ws/docs/a.md', 'one\ntwo\nthree');
  await openLocation({
    targetUri: 'file:///ws/docs/a.md',
    targetRange: { start: { line: 1, character: 0 }, end: { line: 9, character: 0 } },
    targetSelectionRange: { start: { line: 1, character: 0 }, end: { line: 1, character: 3 } },
  });
  const { selection } = mock.shown[0].editor;
  assert.deepEqual([selection.anchor.line, selection.anchor.character], [2, 5]);
});

test('a missing file rejects', async () => {
  await assert.rejects(
    openLocation({
      targetUri: 'file:///ws/gone.md',
      targetRange: { start: { line: 0, character: 0 }, end: { line: 1, character: 0 } },
      targetSelectionRange: { start: { line: 0, character: 0 }, end: { line: 0, character: 0 } },
    }),
    /no such file/,
  );
});
