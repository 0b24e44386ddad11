/* A small fake of the `vscode` module for unit tests: just what src/common uses, plus recorders. */

type Listener<T> = (value: T) => unknown;

export class EventEmitter<T> {
  private listeners = new Set<Listener<T>>();
  readonly event = (listener: Listener<T>) => {
    this.listeners.add(listener);
    return new Disposable(() => this.listeners.delete(listener));
  };
  fire(value: T): void {
    [...this.listeners].forEach((l) => l(value));
  }
  dispose(): void {
    this.listeners.clear();
  }
}

export class Disposable {
  constructor(private readonly fn: () => unknown = () => undefined) {}
  static from(...items: { dispose(): unknown }[]): Disposable {
    return new Disposable(() => items.forEach((i) => i.dispose()));
  }
  dispose(): void {
    this.fn();
  }
}

export class ThemeIcon {
  static readonly File = new ThemeIcon('file');
  constructor(readonly id: string) {}
}
export enum TreeItemCollapsibleState {
  None = 0,
  Collapsed = 1,
  Expanded = 2,
}
export class TreeItem {
  description?: string;
  tooltip?: string;
  resourceUri?: Uri;
  iconPath?: unknown;
  id?: string;
  command?: { command: string; title: string; arguments?: unknown[] };
  constructor(readonly label: string | { label: string; highlights?: [number, number][] }, readonly collapsibleState?: TreeItemCollapsibleState) {}
}
export class TabInputText {
  constructor(readonly uri: Uri) {}
}
export class ThemeColor {
  constructor(readonly id: string) {}
}

export class Uri {
  private constructor(readonly scheme: string, readonly path: string) {}
  static parse(value: string): Uri {
    const match = /^([a-z][\w+.-]*):(?:\/\/[^/]*)?(.*)$/i.exec(value);
    return match ? new Uri(match[1], decodeURIComponent(match[2])) : new Uri('file', value);
  }
  static file(path: string): Uri {
    return new Uri('file', path);
  }
  get fsPath(): string {
    return this.path;
  }
  toString(): string {
    return `${this.scheme}://${this.path}`;
  }
}

export class Position {
  constructor(readonly line: number, readonly character: number) {}
}
export class Range {
  readonly start: Position;
  readonly end: Position;
  constructor(a: Position | number, b: Position | number, c?: number, d?: number) {
    this.start = typeof a === 'number' ? new Position(a, b as number) : a;
    this.end = typeof a === 'number' ? new Position(c as number, d as number) : (b as Position);
  }
  get isEmpty(): boolean {
    return this.start.line === this.end.line && this.start.character === this.end.character;
  }
}
export class Selection extends Range {
  constructor(readonly anchor: Position, readonly active: Position) {
    const anchorFirst = anchor.line < active.line || (anchor.line === active.line && anchor.character <= active.character);
    super(anchorFirst ? anchor : active, anchorFirst ? active : anchor);
  }
}

export class CancellationTokenSource {
  private readonly emitter = new EventEmitter<void>();
  readonly token = { isCancellationRequested: false, onCancellationRequested: this.emitter.event };
  cancel(): void {
    if (!this.token.isCancellationRequested) {
      this.token.isCancellationRequested = true;
      this.emitter.fire();
    }
  }
  dispose(): void {
    this.emitter.dispose();
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}
export enum ProgressLocation {
  SourceControl = 1,
  Window = 10,
  Notification = 15,
}
export enum TextEditorRevealType {
  Default = 0,
  InCenter = 1,
  InCenterIfOutsideViewport = 2,
  AtTop = 3,
}
export enum ConfigurationTarget {
  Global = 1,
  Workspace = 2,
  WorkspaceFolder = 3,
}

/** A fake text document over a string. */
export class FakeDocument {
  readonly lines: string[];
  constructor(readonly uri: Uri, text: string) {
    this.lines = text.split('\n');
  }
  get lineCount(): number {
    return this.lines.length;
  }
  lineAt(line: number) {
    return { range: new Range(line, 0, line, this.lines[line].length), text: this.lines[line] };
  }
  validatePosition(p: Position): Position {
    const line = Math.min(Math.max(p.line, 0), this.lines.length - 1);
    return new Position(line, Math.min(p.character, this.lines[line].length));
  }
  getText(range?: Range): string {
    if (range === undefined) {
      return this.lines.join('\n');
    }
    if (range.start.line === range.end.line) {
      return this.lines[range.start.line].slice(range.start.character, range.end.character);
    }
    const parts = [this.lines[range.start.line].slice(range.start.character)];
    for (let l = range.start.line + 1; l < range.end.line; l++) parts.push(this.lines[l]);
    parts.push(this.lines[range.end.line].slice(0, range.end.character));
    return parts.join('\n');
  }
  getWordRangeAtPosition(p: Position, regex: RegExp): Range | undefined {
    const text = this.lines[p.line];
    const global = new RegExp(regex.source, 'g');
    for (let m = global.exec(text); m; m = global.exec(text)) {
      if (m.index <= p.character && p.character <= m.index + m[0].length) {
        return new Range(p.line, m.index, p.line, m.index + m[0].length);
      }
    }
    return undefined;
  }
}

/**
 * A QuickPick as the workbench drives it: showing a picker with a value reports that value back
 * through onDidChangeValue (VS Code's main thread echoes the value it was given), and new items make
 * the first one active (onDidChangeActive).
 */
export class FakeQuickPick<T> {
  private shownItems: T[] = [];
  private active: T[] = [];
  selectedItems: T[] = [];
  value = '';
  title: string | undefined;
  placeholder: string | undefined;
  busy = false;
  buttons: unknown[] = [];
  matchOnDescription = true;
  matchOnDetail = true;
  visible = false;
  disposed = false;
  readonly changeValue = new EventEmitter<string>();
  readonly accept = new EventEmitter<void>();
  readonly hideEmitter = new EventEmitter<void>();
  readonly button = new EventEmitter<{ item: T; button: unknown }>();
  readonly titleButton = new EventEmitter<unknown>();
  readonly changeActive = new EventEmitter<readonly T[]>();
  readonly onDidChangeValue = this.changeValue.event;
  readonly onDidAccept = this.accept.event;
  readonly onDidHide = this.hideEmitter.event;
  readonly onDidTriggerItemButton = this.button.event;
  readonly onDidTriggerButton = this.titleButton.event;
  readonly onDidChangeActive = this.changeActive.event;
  get items(): T[] {
    return this.shownItems;
  }
  set items(items: T[]) {
    this.shownItems = items;
    this.activeItems = items.slice(0, 1);
  }
  get activeItems(): T[] {
    return this.active;
  }
  /** The workbench reports every change of the active row, also one the extension makes. */
  set activeItems(items: T[]) {
    this.active = items;
    this.changeActive.fire(items);
  }
  show(): void {
    this.visible = true;
    if (this.value !== '') {
      this.changeValue.fire(this.value);
    }
  }
  hide(): void {
    if (this.visible) {
      this.visible = false;
      this.hideEmitter.fire();
    }
  }
  dispose(): void {
    this.disposed = true;
  }
  /** Test helpers: what a user does. */
  type(value: string): void {
    this.value = value;
    this.changeValue.fire(value);
  }
  /** The user moves the active row (arrow keys). */
  moveTo(index: number): void {
    this.activeItems = [this.items[index]];
  }
  acceptItem(index = 0): void {
    this.active = [this.items[index]];
    this.selectedItems = [this.items[index]];
    this.accept.fire();
  }
}

export class LanguageModelChatMessage {
  constructor(readonly role: 'user' | 'assistant', readonly content: string) {}
  static User(content: string): LanguageModelChatMessage {
    return new LanguageModelChatMessage('user', content);
  }
}

export class LanguageModelError extends Error {
  constructor(message: string, readonly code: string) {
    super(message);
  }
  static NoPermissions(message = 'no permission'): LanguageModelError {
    return new LanguageModelError(message, 'NoPermissions');
  }
}

/** A fake chat model: records each request and answers with `reply` (text fragments, an error, or a promise of either). */
export class FakeChatModel {
  readonly requests: { messages: LanguageModelChatMessage[]; options: any; token: any }[] = [];
  reply: string[] | Error | Promise<string[]> = ['{"keywords": "k", "answer": "a", "rephrasing": "r"}'];
  constructor(readonly id = 'fake-model') {}
  async sendRequest(messages: LanguageModelChatMessage[], options: any, token: any) {
    this.requests.push({ messages, options, token });
    const reply = await this.reply;
    if (reply instanceof Error) {
      throw reply;
    }
    return {
      text: (async function* () {
        yield* reply;
      })(),
    };
  }
}

export interface Message {
  level: 'info' | 'warning' | 'error';
  text: string;
  actions: string[];
}

/** Everything tests inspect or set up; reset() before each test. */
export const mock = {
  settings: {} as Record<string, unknown>,
  accessed: new Set<string>(),
  documents: new Map<string, string>(),
  messages: [] as Message[],
  messageAnswer: undefined as string | undefined,
  inputAnswer: undefined as string | undefined,
  inputOptions: [] as any[],
  statusMessages: [] as string[],
  clipboard: '',
  commands: new Map<string, (...args: any[]) => unknown>(),
  executed: [] as { command: string; args: unknown[] }[],
  quickPicks: [] as FakeQuickPick<any>[],
  statusItems: [] as any[],
  shown: [] as { document: FakeDocument; options: any; editor: any }[],
  revealed: [] as Range[],
  revealTypes: [] as (TextEditorRevealType | undefined)[],
  quickPickAnswer: undefined as ((items: any[]) => any) | undefined,
  shownPicks: [] as { items: any[]; options: any }[],
  logLines: [] as string[],
  treeViews: [] as any[],
  tabs: [] as { input: unknown; isPreview: boolean }[],
  closedTabs: [] as unknown[],
  workspaceFolders: undefined as { uri: Uri; name: string; index: number }[] | undefined,
  activeTextEditor: undefined as any,
  configEmitter: new EventEmitter<any>(),
  /** What vscode.lm.selectChatModels answers. */
  chatModels: [] as FakeChatModel[],
  noLanguageModelApi(): void {
    delete lm.selectChatModels;
  },
  reset(): void {
    lm.selectChatModels = selectChatModels;
    this.treeViews = [];
    this.tabs = [];
    this.closedTabs = [];
    this.chatModels = [];
    this.settings = {};
    this.accessed = new Set<string>();
    this.documents.clear();
    this.messages = [];
    this.messageAnswer = undefined;
    this.inputAnswer = undefined;
    this.inputOptions = [];
    this.statusMessages = [];
    this.clipboard = '';
    this.commands.clear();
    this.executed = [];
    this.quickPicks = [];
    this.statusItems = [];
    this.shown = [];
    this.revealed = [];
    this.revealTypes = [];
    this.quickPickAnswer = undefined;
    this.shownPicks = [];
    this.logLines = [];
    this.workspaceFolders = undefined;
    this.activeTextEditor = undefined;
    this.configEmitter = new EventEmitter<any>();
  },
};

function message(level: Message['level']) {
  return (text: string, ...actions: any[]) => {
    mock.messages.push({ level, text, actions: actions.filter((a) => typeof a === 'string') });
    return Promise.resolve(mock.messageAnswer);
  };
}

function logger(level: string) {
  return (text: string) => mock.logLines.push(`[${level}] ${text}`);
}

export const window = {
  createTreeView: (id: string, options: { treeDataProvider: unknown }) => {
    const view = { id, ...options, message: undefined as string | undefined, reveal: () => Promise.resolve(), dispose: () => undefined };
    mock.treeViews.push(view);
    return view;
  },
  createTextEditorDecorationType: (options: unknown) => ({ options, dispose: () => undefined }),
  tabGroups: {
    get all() {
      return [{ tabs: mock.tabs }];
    },
    close: (tabs: any[]) => {
      mock.closedTabs.push(...tabs);
      mock.tabs = mock.tabs.filter((t) => !tabs.includes(t));
      return Promise.resolve(true);
    },
  },
  createOutputChannel: (name: string, _options?: unknown) => ({
    name,
    info: logger('info'),
    warn: logger('warn'),
    error: logger('error'),
    debug: logger('debug'),
    trace: logger('trace'),
    appendLine: logger('line'),
    show: () => mock.executed.push({ command: '<output.show>', args: [name] }),
    dispose: () => undefined,
  }),
  createStatusBarItem: (id: string, alignment: StatusBarAlignment, priority: number) => {
    const item = { id, alignment, priority, text: '', tooltip: '', name: '', command: undefined, backgroundColor: undefined, visible: false,
      show() { item.visible = true; }, hide() { item.visible = false; }, dispose() { item.visible = false; } };
    mock.statusItems.push(item);
    return item;
  },
  createQuickPick: () => {
    const pick = new FakeQuickPick<any>();
    mock.quickPicks.push(pick);
    return pick;
  },
  showInformationMessage: message('info'),
  showWarningMessage: message('warning'),
  showErrorMessage: message('error'),
  showQuickPick: (items: any[], options: any) => {
    mock.shownPicks.push({ items, options });
    return Promise.resolve(mock.quickPickAnswer?.(items));
  },
  showInputBox: (options: any) => {
    mock.inputOptions.push(options);
    return Promise.resolve(mock.inputAnswer);
  },
  setStatusBarMessage: (text: string) => {
    mock.statusMessages.push(text);
    return new Disposable();
  },
  withProgress: (_options: unknown, task: (progress: unknown, token: unknown) => Promise<unknown>) =>
    task({ report: () => undefined }, new CancellationTokenSource().token),
  showTextDocument: (document: FakeDocument, options: any) => {
    const editor = {
      document,
      selection: options?.selection,
      revealRange: (r: Range, type?: TextEditorRevealType) => {
        mock.revealed.push(r);
        mock.revealTypes.push(type);
      },
      decorations: [] as Range[],
      setDecorations(_type: unknown, ranges: Range[]) {
        editor.decorations = ranges;
      },
    };
    mock.shown.push({ document, options, editor });
    return Promise.resolve(editor);
  },
  get activeTextEditor() {
    return mock.activeTextEditor;
  },
};

export const workspace = {
  getConfiguration: (section: string) => ({
    get: <T>(key: string, fallback?: T) => (mock.accessed.add(`${section}.${key}`), `${section}.${key}` in mock.settings ? mock.settings[`${section}.${key}`] : fallback) as T,
    /** A set value is a workspace value here; unset keys have none. */
    inspect: (key: string) => ({ key: `${section}.${key}`, workspaceValue: mock.settings[`${section}.${key}`] }),
  }),
  get workspaceFolders() {
    return mock.workspaceFolders;
  },
  getWorkspaceFolder: (uri: Uri) =>
    mock.workspaceFolders?.find((f) => uri.scheme === f.uri.scheme && (uri.path === f.uri.path || uri.path.startsWith(`${f.uri.path}/`))),
  asRelativePath: (uri: Uri, includeWorkspaceFolder?: boolean) => {
    const folder = workspace.getWorkspaceFolder(uri);
    if (folder === undefined) {
      return uri.fsPath;
    }
    const relative = uri.path.slice(folder.uri.path.length + 1);
    return includeWorkspaceFolder ? `${folder.name}/${relative}` : relative;
  },
  openTextDocument: (uri: Uri) => {
    const text = mock.documents.get(uri.fsPath);
    return text === undefined ? Promise.reject(new Error(`no such file ${uri.fsPath}`)) : Promise.resolve(new FakeDocument(uri, text));
  },
  onDidChangeConfiguration: (listener: Listener<any>) => mock.configEmitter.event(listener),
};

export const commands = {
  registerCommand: (command: string, callback: (...args: any[]) => unknown) => {
    if (mock.commands.has(command)) {
      throw new Error(`command '${command}' already exists`);
    }
    mock.commands.set(command, callback);
    return new Disposable(() => mock.commands.delete(command));
  },
  executeCommand: async (command: string, ...args: unknown[]) => {
    mock.executed.push({ command, args });
    return mock.commands.get(command)?.(...args);
  },
};

const selectChatModels = async (_selector?: unknown) => mock.chatModels;
/** `vscode.lm`; `mock.noLanguageModelApi()` takes its selectChatModels away (a VS Code without the API) until reset. */
export const lm: { selectChatModels?: typeof selectChatModels } = { selectChatModels };

export const env = {
  clipboard: {
    writeText: async (text: string) => {
      mock.clipboard = text;
    },
    readText: async () => mock.clipboard,
  },
};
