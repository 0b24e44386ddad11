import * as assert from 'node:assert/strict';
import { test } from 'node:test';
import { Highlight } from '../../common/protocol';
import { escapeIcons, markSnippet, MARK_CLOSE, MARK_OPEN } from '../../common/snippet';

test('matched words are wrapped in marks', () => {
  assert.equal(markSnippet('retries back off after a failure', [[0, 7], [13, 16]], 160), '«retries» back «off» after a failure');
  assert.equal(markSnippet('no match here', [], 160), 'no match here');
  assert.equal(markSnippet('no match here', undefined, 160), 'no match here');
});

test('ranges are code points, not UTF-16 units (CJK beyond the BMP, emoji)', () => {
  // 𠮷 is one code point and two UTF-16 units; the range [3, 5) is 検索 in code points.
  assert.equal(markSnippet('𠮷野家検索の使い方', [[3, 5]], 160), '𠮷野家«検索»の使い方');
  assert.equal(markSnippet('🚀 launch now', [[2, 8]], 160), '🚀 «launch» now');
});

test('whitespace is collapsed to one line without moving the marks', () => {
  assert.equal(markSnippet('  Run\n\tpip   install  ', [[7, 10], [13, 20]], 160), 'Run «pip» «install»');
});

test('bad ranges are ignored: outside, reversed, empty, overlapping, not integers', () => {
  const bad = [[5, 99], [3, 1], [2, 2], [-1, 1], [0.5, 2], [0, 3], [1, 3]] as Highlight[];
  assert.equal(markSnippet('abcdefgh', bad, 160), '«abc»defgh');
  assert.equal(markSnippet('abcdefgh', [null as never, 'x' as never], 160), 'abcdefgh');
});

test('a long snippet is cut with its marks closed', () => {
  const text = 'alpha beta gamma delta epsilon zeta eta theta';
  assert.equal(markSnippet(text, [[0, 5]], 20), '«alpha» beta gamma…');
  assert.equal(markSnippet(text, [[11, 22]], 24), 'alpha beta «gamma»…', 'matched words are cut between words');
  assert.equal(markSnippet(text, [[11, 22]], 18), 'alpha beta…', 'never half a matched word');
});

test('icon syntax is escaped, also when a mark sits next to it', () => {
  assert.equal(escapeIcons('$(sync) and $(not an icon) and $(x~spin)'), '\\$(sync) and $(not an icon) and \\$(x~spin)');
  assert.equal(markSnippet('see $(sync) here', [[4, 11]], 160), 'see «\\$(sync)» here');
});

/** A small seeded generator, so a failure names a reproducible case. */
function random(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

test('for any snippet and ranges: marks balance, the text is a prefix of the flattened snippet, the cut respects max', () => {
  const alphabet = ['a', 'b', ' ', '\n', '検', '𠮷', '«', '$', '(', ')'];
  for (let seed = 1; seed <= 400; seed++) {
    const next = random(seed);
    const length = Math.floor(next() * 40);
    const snippet = Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    const ranges: Highlight[] = Array.from({ length: Math.floor(next() * 5) }, () => {
      const a = Math.floor(next() * (length + 2)) - 1;
      return [a, a + Math.floor(next() * 6)];
    });
    const max = 5 + Math.floor(next() * 40);
    const out = markSnippet(snippet.replace(/«/g, 'x'), ranges, max);
    const context = JSON.stringify({ seed, snippet, ranges, max, out });
    let open = false;
    for (const ch of out) {
      if (ch === MARK_OPEN) {
        assert.equal(open, false, context);
        open = true;
      } else if (ch === MARK_CLOSE) {
        assert.equal(open, true, context);
        open = false;
      }
    }
    assert.equal(open, false, context);
    assert.ok(Array.from(out.replace(/\\\$\(/g, '$(')).length <= max, context);
    const plain = out.replace(/[«»]/g, '').replace(/\\\$\(/g, '$(').replace(/…$/, '');
    const flat = snippet.replace(/«/g, 'x').replace(/\s+/g, ' ').trim();
    assert.ok(flat.startsWith(plain.trimEnd()), context);
  }
});
