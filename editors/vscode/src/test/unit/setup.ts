/* Preloaded by `node --require`: `vscode` and `vscode-languageclient/node` resolve to the fakes in ./mock. */
import Module = require('node:module');
import * as fakeClient from './mock/languageclient';
import * as fakeVscode from './mock/vscode';

const loader = Module as unknown as { _load(request: string, parent: unknown, isMain: boolean): unknown };
const original = loader._load;
loader._load = function (request: string, parent: unknown, isMain: boolean): unknown {
  if (request === 'vscode') {
    return fakeVscode;
  }
  if (request === 'vscode-languageclient/node') {
    return fakeClient;
  }
  return original.call(this, request, parent, isMain);
};
