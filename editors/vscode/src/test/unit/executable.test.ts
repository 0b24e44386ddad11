import * as assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { test } from 'node:test';
import { fakeServerExecutable } from './helpers';
import { findExecutable } from '../../common/executable';

test('a bare name is looked up on PATH', async () => {
  const file = fakeServerExecutable();
  assert.equal(await findExecutable('fisk-ls', { PATH: `/nonexistent:${path.dirname(file)}` }, 'linux'), file);
});

test('a name missing from PATH is not found', async () => {
  assert.equal(await findExecutable('fisk-ls', { PATH: '/nonexistent' }, 'linux'), undefined);
  assert.equal(await findExecutable('fisk-ls', {}, 'linux'), undefined);
  assert.equal(await findExecutable('', { PATH: '/bin' }, 'linux'), undefined);
});

test('a file without the execute bit is skipped', async () => {
  const file = fakeServerExecutable();
  fs.chmodSync(file, 0o644);
  assert.equal(await findExecutable('fisk-ls', { PATH: path.dirname(file) }, 'linux'), undefined);
  assert.equal(await findExecutable(file, {}, 'linux'), undefined);
});

test('a path must name an executable file, not a directory', async () => {
  const file = fakeServerExecutable();
  assert.equal(await findExecutable(file, {}, 'linux'), file);
  assert.equal(await findExecutable(path.dirname(file) + '/', {}, 'linux'), undefined);
  assert.equal(await findExecutable(`${file}-missing`, {}, 'linux'), undefined);
});

test('Windows: PATHEXT extensions are tried', async () => {
  const file = fakeServerExecutable('fisk-ls.EXE');
  assert.equal(await findExecutable('fisk-ls', { PATH: path.dirname(file), PATHEXT: '.COM;.EXE' }, 'win32'), file);
});
