/* A fake of `vscode-languageclient/node` for unit tests: records options and answers requests. */
import { commands, EventEmitter } from './vscode';

export enum State {
  Stopped = 1,
  Running = 2,
  Starting = 3,
}
export enum TransportKind {
  stdio = 0,
  ipc = 1,
  pipe = 2,
  socket = 3,
}
export enum RevealOutputChannelOn {
  Debug = 0,
  Info = 1,
  Warn = 2,
  Error = 3,
  Never = 4,
}
export const LSPErrorCodes = { RequestFailed: -32803, RequestCancelled: -32800 };
export class ResponseError extends Error {
  constructor(readonly code: number, message: string) {
    super(message);
  }
}
export const ExecuteCommandRequest = { method: 'workspace/executeCommand', type: { method: 'workspace/executeCommand' } };
export const ShowMessageNotification = { method: 'window/showMessage', type: { method: 'window/showMessage' } };
export enum MessageType {
  Error = 1,
  Warning = 2,
  Info = 3,
  Log = 4,
}

export type Handler = (args: any, token: any) => unknown;

export class FakeLanguageClient {
  static instances: FakeLanguageClient[] = [];
  /** Answers for `workspace/executeCommand`, by server command. */
  static handlers = new Map<string, Handler>();
  static startError: Error | undefined;
  readonly requests: { command: string; args: any[]; token: any }[] = [];
  /** Handlers of server → client requests (`onRequest`), by method. */
  readonly requestHandlers = new Map<string, Handler>();
  /** Handlers of server → client notifications (`onNotification`), by method. */
  readonly notificationHandlers = new Map<string, (params: any) => void>();
  readonly stateEmitter = new EventEmitter<{ oldState: State; newState: State }>();
  readonly onDidChangeState = this.stateEmitter.event;
  state = State.Stopped;
  stopped = false;

  /** The server's `executeCommandProvider.commands` at initialize. */
  static serverCommands = ['fisk.knowledge.search', 'fisk.knowledge.show', 'fisk.knowledge.reindex', 'fisk.knowledge.status'];
  /** Like the real ExecuteCommandFeature: registers the server's command ids as global VS Code commands. */
  readonly executeCommandFeature = {
    registered: [] as { dispose(): void }[],
    initialize(capabilities: { executeCommandProvider?: { commands: string[] } }): void {
      this.register({ registerOptions: capabilities.executeCommandProvider ?? { commands: [] } });
    },
    register(data: { registerOptions: { commands: string[] } }): void {
      for (const command of data.registerOptions.commands) {
        this.registered.push(commands.registerCommand(command, () => undefined));
      }
    },
    clear(): void {
      this.registered.splice(0).forEach((d) => d.dispose());
    },
  };

  constructor(readonly id: string, readonly name: string, readonly serverOptions: any, readonly clientOptions: any) {
    FakeLanguageClient.instances.push(this);
  }

  getFeature(method: string): any {
    if (method !== 'workspace/executeCommand') {
      throw new Error(`unexpected feature ${method}`);
    }
    return this.executeCommandFeature;
  }

  onRequest(method: string, handler: Handler): { dispose(): void } {
    this.requestHandlers.set(method, handler);
    return { dispose: () => this.requestHandlers.delete(method) };
  }

  onNotification(type: { method: string }, handler: (params: any) => void): { dispose(): void } {
    this.notificationHandlers.set(type.method, handler);
    return { dispose: () => this.notificationHandlers.delete(type.method) };
  }

  /** Test helper: the server sends a notification to the client. */
  serverNotification(method: string, params: unknown): void {
    const handler = this.notificationHandlers.get(method);
    if (handler === undefined) {
      throw new Error(`the client has no handler for ${method}`);
    }
    handler(params);
  }

  /** Test helper: the server sends a request to the client; resolves with the client's answer. */
  async serverRequest(method: string, params: unknown, token: unknown): Promise<unknown> {
    const handler = this.requestHandlers.get(method);
    if (handler === undefined) {
      throw new Error(`the client has no handler for ${method}`);
    }
    return handler(params, token);
  }

  async start(): Promise<void> {
    this.setState(State.Starting);
    if (FakeLanguageClient.startError) {
      this.setState(State.Stopped);
      throw FakeLanguageClient.startError;
    }
    this.executeCommandFeature.initialize({ executeCommandProvider: { commands: FakeLanguageClient.serverCommands } });
    this.setState(State.Running);
  }

  async stop(): Promise<void> {
    this.executeCommandFeature.clear();
    this.stopped = true;
    this.setState(State.Stopped);
  }

  async sendRequest(type: { method: string }, params: { command: string; arguments: any[] }, token?: any): Promise<unknown> {
    if (type.method !== 'workspace/executeCommand') {
      throw new Error(`unexpected request ${type.method}`);
    }
    this.requests.push({ command: params.command, args: params.arguments, token });
    const handler = FakeLanguageClient.handlers.get(params.command);
    if (handler === undefined) {
      throw new Error(`no fake answer for ${params.command}`);
    }
    return handler(params.arguments[0], token);
  }

  /** Test helper: the server sends `$/progress`. */
  progress(value: any): void {
    this.clientOptions.middleware.handleWorkDoneProgress('token', value, () => undefined);
  }

  private setState(newState: State): void {
    const oldState = this.state;
    this.state = newState;
    this.stateEmitter.fire({ oldState, newState });
  }

  static reset(): void {
    FakeLanguageClient.instances = [];
    FakeLanguageClient.handlers = new Map();
    FakeLanguageClient.startError = undefined;
  }
}

export const LanguageClient = FakeLanguageClient;
