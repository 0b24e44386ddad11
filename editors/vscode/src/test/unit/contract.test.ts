/*
 * The settings contract: package.json `contributes.configuration`, the language model tool's input
 * schema and src/common/contract.ts must agree with the limits the server defines once, in
 * fisk_ls/knowledge/settings.schema.json (generated from the Python core). Change a limit there and
 * these tests fail until the extension follows.
 */
import * as assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { beforeEach, test } from 'node:test';
import { mock } from './mock/vscode';
import { reset } from './helpers';
import { QUERY_MAX_LENGTH, TOP_K } from '../../common/contract';
import { getSettings, toServerSettings } from '../../common/settings';
import { parseToolInput } from '../../common/tool';

interface Property {
  type: string;
  minimum?: number;
  maximum?: number;
  maxLength?: number;
  default?: unknown;
  items?: { type: string };
  properties?: Record<string, Property>;
}
interface Schema {
  properties: Record<string, Property>;
  $defs?: Record<string, Property>;
}

const extDir = path.resolve(__dirname, '../../..');
const repo = path.resolve(extDir, '../..');
const schemaFile = path.join(repo, 'fisk_ls/knowledge/settings.schema.json');
const manifest = JSON.parse(fs.readFileSync(path.join(extDir, 'package.json'), 'utf8'));
const contributed: Record<string, Property> = manifest.contributes.configuration.properties;
const toolSchema: Record<string, Property> = manifest.contributes.languageModelTools[0].inputSchema.properties;

/** The schema file; before it exists, topK's limits straight from the Python core's constants. */
function loadSchema(): Schema {
  if (fs.existsSync(schemaFile)) {
    return JSON.parse(fs.readFileSync(schemaFile, 'utf8')) as Schema;
  }
  const python = process.env.FISK_PYTHON ?? path.join(repo, '.venv/bin/python');
  const code =
    'import json; from fisk_ls.knowledge.config import DEFAULT_TOP_K as d, TOP_K_CEILING as c; ' +
    'print(json.dumps({"properties": {"topK": {"type": "integer", "minimum": 1, "maximum": c, "default": d}}}))';
  return JSON.parse(execFileSync(python, ['-c', code], { cwd: repo, encoding: 'utf8' })) as Schema;
}
const schema = loadSchema();

/** The limits of a property, without its description (what both sides must agree on). */
function limits(p: Property | undefined): Partial<Property> {
  assert.ok(p, 'the property exists');
  const out: Partial<Property> = { type: p.type };
  for (const key of ['minimum', 'maximum', 'maxLength'] as const) {
    if (p[key] !== undefined) {
      out[key] = p[key];
    }
  }
  if (p.items !== undefined) {
    out.items = { type: p.items.type };
  }
  return out;
}

beforeEach(reset);

test('fisk.topK in package.json has the server limits and default', () => {
  const topK = schema.properties.topK;
  assert.deepEqual(limits(contributed['fisk.topK']), limits(topK));
  assert.equal(contributed['fisk.topK'].default, topK.default);
  assert.deepEqual({ ...TOP_K }, { minimum: topK.minimum, maximum: topK.maximum, default: topK.default }, 'src/common/contract.ts');
});

test("the language model tool's input schema has the request limits", () => {
  const topK = schema.properties.topK;
  assert.deepEqual(limits(toolSchema.topK), { type: 'integer', minimum: topK.minimum, maximum: topK.maximum });
  const query = schema.$defs?.query;
  if (query !== undefined) {
    assert.equal(toolSchema.query.maxLength, query.maxLength);
    assert.equal(QUERY_MAX_LENGTH, query.maxLength, 'src/common/contract.ts');
  }
});

test('every contributed server setting is in the schema with the same type and limits', () => {
  const clientOnly = new Set(['fisk.server.command', 'fisk.server.args', 'fisk.trace.server', 'fisk.languages']);
  for (const [key, property] of Object.entries(contributed)) {
    if (clientOnly.has(key)) {
      continue;
    }
    const [, ...wire] = key.split('.');
    const serverProperty = wire.length === 2 ? schema.properties[wire[0]]?.properties?.[wire[1]] : schema.properties[wire[0]];
    if (serverProperty === undefined && !fs.existsSync(schemaFile)) {
      continue; // the constants fallback only knows topK
    }
    assert.ok(serverProperty, `${key} is a server setting`);
    assert.deepEqual(limits(property), limits(serverProperty), key);
  }
});

test('every key the extension sends is one the schema defines', () => {
  Object.assign(mock.settings, {
    'fisk.paths': ['docs'],
    'fisk.topK': 3,
    'fisk.embeddings.baseUrl': 'http://127.0.0.1:8080/v1',
    'fisk.embeddings.model': 'm',
    'fisk.embeddings.apiKeyEnv': 'KEY',
    'fisk.embeddings.queryPrefix': 'query: ',
    'fisk.embeddings.documentPrefix': 'passage: ',
    'fisk.workspaceSymbols': true,
  });
  const sent = toServerSettings(getSettings()) as unknown as Record<string, unknown>;
  assert.deepEqual(getSettings().problems, []);
  if (!fs.existsSync(schemaFile)) {
    assert.ok('topK' in sent);
    return;
  }
  for (const key of Object.keys(sent)) {
    assert.ok(schema.properties[key], `${key} is a server setting`);
  }
  for (const key of Object.keys(sent.embeddings as object)) {
    assert.ok(schema.properties.embeddings.properties?.[key], `embeddings.${key} is a server setting`);
  }
});

test('topK at the limits is kept; one past them is the default with a warning (setting) or an error (request)', () => {
  const { minimum, maximum } = schema.properties.topK;
  assert.ok(minimum !== undefined && maximum !== undefined);
  for (const good of [minimum, maximum]) {
    mock.settings['fisk.topK'] = good;
    assert.equal(getSettings().topK, good);
    assert.equal(parseToolInput({ query: 'q', topK: good }).topK, good);
  }
  for (const bad of [minimum - 1, maximum + 1]) {
    mock.settings['fisk.topK'] = bad;
    assert.equal(getSettings().topK, schema.properties.topK.default);
    assert.equal(getSettings().problems.length, 1);
    assert.match(getSettings().problems[0], new RegExp(`^fisk\\.topK \\(expected an integer from ${minimum} to ${maximum}`));
    assert.throws(() => parseToolInput({ query: 'q', topK: bad }), new RegExp(`topK must be an integer from ${minimum} to ${maximum}`));
  }
});
