/* Shared builders for the unit tests. */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { FakeLanguageClient } from './mock/languageclient';
import { mock } from './mock/vscode';
import { SearchHit, SearchResult } from '../../common/protocol';
import { resetReportedProblems } from '../../common/server';
import type { CommandViews } from '../../common/commands';
import { SearchPreview } from '../../common/preview';
import { ResultsView } from '../../common/results';
import { SemanticOffer } from '../../common/semantic';

export function reset(): void {
  mock.reset();
  FakeLanguageClient.reset();
  resetReportedProblems();
}

export function hit(citation: string, line: number, section = 'Install > pip', lines = 3): SearchHit {
  const relpath = citation.slice(0, citation.lastIndexOf('#'));
  return {
    citation,
    section,
    snippet: `Run   pip install\n fisk-ls to get ${relpath}`,
    score: 0.75,
    location: {
      targetUri: `file:///ws/${relpath}`,
      targetRange: { start: { line, character: 0 }, end: { line: line + lines, character: 0 } },
      targetSelectionRange: { start: { line, character: 0 }, end: { line, character: 10 } },
    },
  };
}

export function result(hits: SearchHit[], extra: Partial<SearchResult> = {}): SearchResult {
  return { tier: 'lexical', status: 'ok', degraded: false, reason: null, results: hits, ...extra };
}

const tempDirs: string[] = [];
process.on('exit', () => tempDirs.forEach((dir) => fs.rmSync(dir, { recursive: true, force: true })));

/** A temp directory (removed at exit) holding an executable `fisk-ls` script; returns its path. */
export function fakeServerExecutable(name = 'fisk-ls'): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'fisk-unit-'));
  tempDirs.push(dir);
  const file = path.join(dir, name);
  fs.writeFileSync(file, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
  return file;
}

/** Lets pending promise callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

export function deferred<T>(): { promise: Promise<T>; resolve(v: T): void; reject(e: unknown): void } {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** The views registerCommands needs, on the fake vscode (a fresh Memento each call). */
export function commandViews(executable: () => string | undefined = () => undefined): CommandViews {
  const state = new Map<string, unknown>();
  const memento = { get: (k: string) => state.get(k), update: (k: string, v: unknown) => (state.set(k, v), Promise.resolve()), keys: () => [...state.keys()] };
  return { results: new ResultsView('fisk.openResult'), preview: new SearchPreview(), semantic: new SemanticOffer(memento as never, executable) };
}
