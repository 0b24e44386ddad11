import * as vscode from 'vscode';
import {
  ConfigurationParams,
  ExecuteCommandRequest,
  LanguageClient,
  LanguageClientOptions,
  MessageType,
  RevealOutputChannelOn,
  ServerOptions,
  ShowMessageNotification,
  ShowMessageParams,
  State,
  WorkDoneProgressBegin,
  WorkDoneProgressEnd,
  WorkDoneProgressReport,
} from 'vscode-languageclient/node';
import { CLIENT_ID, CLIENT_NAME, Commands, DEFAULT_SERVER_COMMAND, INSTALL_COMMAND, INSTALL_HINT, SETTINGS_SECTION } from './constants';
import { findExecutable } from './executable';
import { errorMessage, logError, logInfo, logWarn } from './log';
import { ServerNotRunningError } from './protocol';
import { answerExpand, EXPAND_REQUEST } from './expand';
import { documentSelector, expandVariables, getSettings } from './settings';
import type { SetupResult } from './setup';

export type ServerState =
  | { kind: 'starting' }
  | { kind: 'running' }
  | { kind: 'missing'; command: string }
  | { kind: 'failed'; message: string }
  | { kind: 'stopped' };

export type IndexProgress = WorkDoneProgressBegin | WorkDoneProgressReport | WorkDoneProgressEnd;

export type ClientFactory = (
  id: string,
  name: string,
  serverOptions: ServerOptions,
  clientOptions: LanguageClientOptions,
) => LanguageClient;

const defaultFactory: ClientFactory = (id, name, serverOptions, clientOptions) =>
  new LanguageClient(id, name, serverOptions, clientOptions);

/** Owns the one LanguageClient: start, restart, stop, state, and `workspace/executeCommand` requests. */
export class FiskServer implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private current: ServerState = { kind: 'stopped' };
  private pending: Promise<void> = Promise.resolve();
  private executable: string | undefined;
  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly progressEmitter = new vscode.EventEmitter<IndexProgress>();
  private readonly messageEmitter = new vscode.EventEmitter<ShowMessageParams>();
  readonly onDidChangeState = this.stateEmitter.event;
  /**
   * The server's `window/showMessage` notifications, each shown as the server wrote it: among them
   * its one message naming every bad setting (the extension checks none of the server's settings).
   */
  readonly onDidShowMessage = this.messageEmitter.event;
  /** The server's `$/progress` (work done) notifications: begin / report / end of an index run. */
  readonly onDidProgress = this.progressEmitter.event;

  constructor(
    private readonly outputChannel: vscode.LogOutputChannel,
    private readonly createClient: ClientFactory = defaultFactory,
    /** Sets up the bundled server when the default command is not on PATH (setup.ts); absent: never. */
    private readonly setup?: () => Promise<SetupResult>,
  ) {}

  /** The server executable started last (undefined before one started). */
  get serverExecutable(): string | undefined {
    return this.executable;
  }

  get state(): ServerState {
    return this.current;
  }

  /** Stops a running server (if any) and starts a new one; calls are serialised. */
  restart(): Promise<void> {
    return this.enqueue(async () => {
      await this.stopClient(false);
      await this.startClient();
    });
  }

  stop(): Promise<void> {
    return this.enqueue(() => this.stopClient());
  }

  /** Sends `workspace/executeCommand`; throws ServerNotRunningError saying why when there is no server. */
  async request<R>(command: string, args?: object, token?: vscode.CancellationToken): Promise<R> {
    await this.pending;
    const client = this.client;
    if (client === undefined || this.current.kind !== 'running') {
      throw new ServerNotRunningError(describeState(this.current), this.current.kind);
    }
    const params = { command, arguments: args === undefined ? [] : [args] };
    return (await client.sendRequest(ExecuteCommandRequest.type, params, token)) as R;
  }

  /** Why requests cannot be served right now, in one sentence (empty when running). */
  describe(): string {
    return describeState(this.current);
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.progressEmitter.dispose();
    this.messageEmitter.dispose();
  }

  /** Runs start/stop steps one after another; a failed step is logged and does not block the next. */
  private enqueue(step: () => Promise<void>): Promise<void> {
    this.pending = this.pending.then(step).catch((error: unknown) => {
      logError('server lifecycle step failed', error);
      this.setState({ kind: 'failed', message: errorMessage(error) });
    });
    return this.pending;
  }

  private setState(state: ServerState): void {
    this.current = state;
    this.stateEmitter.fire(state);
  }

  private async startClient(): Promise<void> {
    const settings = getSettings();
    reportProblems(settings.problems);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const command = expandVariables(settings.serverCommand, folder);
    this.setState({ kind: 'starting' });
    let executable = await findExecutable(command);
    if (executable === undefined && command === DEFAULT_SERVER_COMMAND && this.setup !== undefined) {
      // Not on PATH and not configured: the extension's own environment, set up on first use.
      const set = await this.setup();
      if (set !== undefined && 'problem' in set) {
        this.setState({ kind: 'missing', command });
        void showSetupProblem(set.problem);
        return;
      }
      executable = set?.executable;
    }
    if (executable === undefined) {
      logError(`server command not found: ${command}; install it with ${INSTALL_HINT}`);
      this.setState({ kind: 'missing', command });
      void showMissingServer(command);
      return;
    }
    this.executable = executable;
    logInfo(`starting ${executable} ${settings.serverArgs.join(' ')}`.trim());
    // No `transport`: with TransportKind.stdio the client would append `--stdio`, which fisk-ls rejects.
    const serverOptions: ServerOptions = {
      command: executable,
      args: settings.serverArgs,
      options: folder === undefined ? {} : { cwd: folder },
    };
    const client = this.createClient(
      CLIENT_ID,
      CLIENT_NAME,
      serverOptions,
      this.clientOptions(settings.server, documentSelector(settings.languages)),
    );
    keepServerCommandsPrivate(client);
    // Expansion provider `editor`: the server asks the editor's language model through the client.
    client.onRequest(EXPAND_REQUEST, (params: unknown, token: vscode.CancellationToken) => answerExpand(params, token));
    client.onNotification(ShowMessageNotification.type, (params: ShowMessageParams) => {
      if (this.client === client) {
        showServerMessage(params);
        this.messageEmitter.fire(params);
      }
    });
    client.onDidChangeState((event) => {
      if (this.client !== client) {
        return;
      }
      if (event.newState === State.Running) {
        this.setState({ kind: 'running' });
      } else if (event.newState === State.Starting) {
        this.setState({ kind: 'starting' });
      } else if (this.current.kind === 'running' || this.current.kind === 'starting') {
        this.setState({ kind: 'failed', message: 'the server stopped' });
      }
    });
    this.client = client;
    try {
      await client.start();
      this.setState({ kind: 'running' });
    } catch (error) {
      this.client = undefined;
      const message = errorMessage(error);
      logError('the server failed to start', error);
      this.setState({ kind: 'failed', message });
      void showFailedServer(message);
    }
  }

  /** Stops the client; `report` false during a restart so the state goes straight to starting. */
  private async stopClient(report = true): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client !== undefined) {
      try {
        await client.stop(5000);
      } catch (error) {
        logError('stopping the server failed', error);
      }
    }
    if (report) {
      this.setState({ kind: 'stopped' });
    }
  }

  private clientOptions(initializationOptions: object, selector: LanguageClientOptions['documentSelector']): LanguageClientOptions {
    return {
      // Markdown and plain text by default (`fisk.languages`): the server has nothing to say about code files.
      documentSelector: selector,
      outputChannel: this.outputChannel,
      revealOutputChannelOn: RevealOutputChannelOn.Never,
      initializationOptions,
      initializationFailedHandler: (error) => {
        logError('initialize failed', error);
        return false;
      },
      middleware: {
        workspace: {
          configuration: async (params, token, next) => answerConfiguration(params, await next(params, token)),
        },
        handleWorkDoneProgress: (_token, params, next) => {
          this.progressEmitter.fire(params);
          next(_token, params);
        },
      },
    };
  }
}

/**
 * vscode-languageclient registers every command of the server's `executeCommandProvider`
 * (`fisk.knowledge.search`, ...) as a global VS Code command. Any second client of fisk-ls in the
 * same extension host (another extension, a generic LSP client) would then fail to start with
 * "command 'fisk.knowledge.search' already exists". The extension sends `workspace/executeCommand`
 * itself (`FiskServer.request`), so it leaves those ids unregistered and never collides.
 */
export function keepServerCommandsPrivate(client: LanguageClient): void {
  const feature = client.getFeature(ExecuteCommandRequest.method);
  feature.initialize = () => undefined;
  feature.register = () => undefined;
}

/**
 * `workspace/configuration`: section `fisk` gets the same object as initializationOptions, the
 * settings as set (the server checks them and names a bad one in a message of its own).
 */
export function answerConfiguration(params: ConfigurationParams, defaults: unknown): unknown[] {
  const fallback = Array.isArray(defaults) ? defaults : [];
  const problems: string[] = [];
  const answer = params.items.map((item, i) => {
    if (item.section !== SETTINGS_SECTION) {
      return fallback[i] ?? null;
    }
    const scope = item.scopeUri === undefined ? undefined : vscode.Uri.parse(item.scopeUri);
    const settings = getSettings(scope);
    problems.push(...settings.problems);
    return settings.server;
  });
  reportProblems([...new Set(problems)]);
  return answer;
}

let lastProblems = '';

/**
 * A bad setting of the extension's own (the server command, its arguments, the languages): its default
 * applies and one warning names every bad field, as the server does for its settings. The same
 * warning is not repeated (settings are read again at every restart and configuration request).
 */
export function reportProblems(problems: readonly string[]): void {
  const message = problems.length === 0 ? '' : `fisk: ignoring invalid settings, using defaults for: ${problems.join('; ')}`;
  if (message === lastProblems) {
    return;
  }
  lastProblems = message;
  if (message !== '') {
    logWarn(message);
    void vscode.window.showWarningMessage(message);
  }
}

/** Forgets the last warning (tests). */
export function resetReportedProblems(): void {
  lastProblems = '';
}

/** A `window/showMessage` of the server, as it wrote it (its messages start with "fisk: "), also in the log. */
export function showServerMessage(params: ShowMessageParams): void {
  switch (params.type) {
    case MessageType.Error:
      logError(params.message);
      void vscode.window.showErrorMessage(params.message);
      break;
    case MessageType.Warning:
      logWarn(params.message);
      void vscode.window.showWarningMessage(params.message);
      break;
    default:
      logInfo(params.message);
      void vscode.window.showInformationMessage(params.message);
  }
}

export function describeState(state: ServerState): string {
  switch (state.kind) {
    case 'running':
      return '';
    case 'starting':
      return 'The fisk-ls server is still starting.';
    case 'missing':
      return missingMessage(state.command);
    case 'failed':
      return `The fisk-ls server is not running (${state.message}). See "Fisk: Show Log", then run "Fisk: Restart Server".`;
    case 'stopped':
      return 'The fisk-ls server is not running. Run "Fisk: Restart Server".';
  }
}

export function missingMessage(command: string): string {
  const where = command.includes('/') || command.includes('\\') ? '' : ' on PATH';
  return `The language server "${command}" was not found${where}. Install it with ${INSTALL_HINT}, or set "fisk.server.command" to its full path.`;
}

async function showMissingServer(command: string): Promise<void> {
  const copy = 'Copy Install Command';
  const settings = 'Open Settings';
  const choice = await vscode.window.showErrorMessage(`Fisk: ${missingMessage(command)}`, copy, settings);
  if (choice === copy) {
    await vscode.env.clipboard.writeText(INSTALL_COMMAND);
  } else if (choice === settings) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'fisk.server.command');
  }
}

async function showSetupProblem(problem: string): Promise<void> {
  const log = 'Show Log';
  const settings = 'Open Settings';
  const choice = await vscode.window.showErrorMessage(problem, log, settings);
  if (choice === log) {
    await vscode.commands.executeCommand(Commands.showLog);
  } else if (choice === settings) {
    await vscode.commands.executeCommand('workbench.action.openSettings', 'fisk.server.command');
  }
}

async function showFailedServer(message: string): Promise<void> {
  const log = 'Show Log';
  const choice = await vscode.window.showErrorMessage(`Fisk: the fisk-ls server failed to start: ${message}`, log);
  if (choice === log) {
    await vscode.commands.executeCommand(Commands.showLog);
  }
}
