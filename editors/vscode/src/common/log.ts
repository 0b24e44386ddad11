import * as vscode from 'vscode';
import { CLIENT_NAME } from './constants';

/** The one output channel of the extension; the language client logs and traces into it too. */
let channel: vscode.LogOutputChannel | undefined;

export function createLog(): vscode.LogOutputChannel {
  channel = vscode.window.createOutputChannel(CLIENT_NAME, { log: true });
  return channel;
}

export function getLog(): vscode.LogOutputChannel | undefined {
  return channel;
}

export function logInfo(message: string): void {
  channel?.info(message);
}

export function logWarn(message: string): void {
  channel?.warn(message);
}

export function logError(message: string, error?: unknown): void {
  channel?.error(error === undefined ? message : `${message}: ${errorMessage(error)}`);
}

/** A one-line human message for any thrown value (JSON-RPC errors carry `message`). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) {
    return error.message;
  }
  if (typeof error === 'object' && error !== null && 'message' in error) {
    return String((error as { message: unknown }).message);
  }
  return String(error);
}
