import * as vscode from 'vscode';
import { Commands, ServerCommands } from './constants';
import { logWarn, errorMessage } from './log';
import { IndexStatus, RootStatus, SearchResult, VectorCoverage } from './protocol';
import { describeState, FiskServer, IndexProgress, ServerState } from './server';

export type TierKind = 'lexical' | 'hybrid' | 'degraded';

/** What the status bar item shows; `severity` picks the background colour. */
export interface StatusView {
  text: string;
  tooltip: string;
  severity: 'normal' | 'warning' | 'error';
}

/** While vectors fill in (and no index run reports progress), the status is asked for this often. */
export const COVERAGE_POLL_MS = 5000;

export interface IndexingState {
  message?: string;
  percentage?: number;
}

/** The tier's kind from the server's one-line tier description ("hybrid (model, 384d)", "degraded: …"). */
export function tierKind(tier: string): TierKind | undefined {
  const match = /^\s*(lexical|hybrid|degraded)\b/i.exec(tier);
  return match ? (match[1].toLowerCase() as TierKind) : undefined;
}

/**
 * What the item shows. `degradedReason` comes from the last search: the index status cannot know
 * that the embeddings API stopped answering, a search can.
 */
export function statusView(state: ServerState, status?: IndexStatus, indexing?: IndexingState, degradedReason?: string): StatusView {
  if (state.kind === 'starting') {
    return { text: '$(sync~spin) Fisk', tooltip: 'Fisk: starting the fisk-ls server…', severity: 'normal' };
  }
  if (state.kind !== 'running') {
    return { text: '$(error) Fisk', tooltip: `Fisk: ${describeState(state)}`, severity: 'error' };
  }
  const details = status === undefined ? [] : statusLines(status);
  if (indexing !== undefined || status?.indexing === true) {
    const progress = indexing?.message ?? (indexing?.percentage === undefined ? 'indexing' : `${indexing.percentage}%`);
    return { text: `$(sync~spin) Fisk: ${progress}`, tooltip: ['Fisk: indexing docs…', ...details].join('\n'), severity: 'normal' };
  }
  if (degradedReason !== undefined) {
    return {
      text: '$(warning) Fisk: degraded',
      tooltip: [`Fisk: search is degraded: ${degradedReason}`, ...details, 'Click for index status.'].join('\n'),
      severity: 'warning',
    };
  }
  if (status === undefined) {
    return { text: '$(book) Fisk', tooltip: 'Fisk: the server is running', severity: 'normal' };
  }
  const kind = tierKind(status.tier);
  const icon = kind === 'degraded' ? '$(warning)' : '$(book)';
  const cov = coverage(status);
  const filling = cov !== undefined && cov.embedded < cov.chunks ? ` ${thousands(cov.embedded)}/${thousands(cov.chunks)} embedded` : '';
  return {
    text: `${icon} Fisk: ${kind ?? status.tier}${filling}`,
    tooltip: [...details, 'Click for index status.'].join('\n'),
    severity: kind === 'degraded' ? 'warning' : 'normal',
  };
}

/** 6628 → "6,628". */
export function thousands(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

function rootCoverage(root: RootStatus): VectorCoverage | undefined {
  const v = root.vectors;
  return v !== null && typeof v === 'object' && typeof v.embedded === 'number' && typeof v.chunks === 'number' ? v : undefined;
}

/** The embedded / total chunks over the hybrid roots; undefined when no root has vectors. */
export function coverage(status: IndexStatus): VectorCoverage | undefined {
  const covered = status.roots.map(rootCoverage).filter((v): v is VectorCoverage => v !== undefined);
  if (covered.length === 0) {
    return undefined;
  }
  return covered.reduce((sum, v) => ({ embedded: sum.embedded + v.embedded, chunks: sum.chunks + v.chunks }), { embedded: 0, chunks: 0 });
}

export function statusLines(status: IndexStatus): string[] {
  const roots = status.roots.map((r) => {
    const cov = rootCoverage(r);
    const vectors = cov === undefined ? '' : `, ${thousands(cov.embedded)}/${thousands(cov.chunks)} embedded`;
    const counts = `${r.root}: ${thousands(r.documents)} documents, ${thousands(r.chunks)} chunks${vectors}`;
    if (r.error) {
      return `${counts} (error: ${r.error})`;
    }
    return r.built === false ? `${counts} (not built yet)` : counts;
  });
  return [`Fisk: ${status.tier}`, ...roots];
}

/** The status bar item: server state, tier, and indexing progress from the server's `$/progress`. */
export class StatusBar implements vscode.Disposable {
  private readonly item: vscode.StatusBarItem;
  private readonly changeEmitter = new vscode.EventEmitter<StatusView>();
  private readonly disposables: vscode.Disposable[] = [];
  private status: IndexStatus | undefined;
  private indexing: IndexingState | undefined;
  private degradedReason: string | undefined;
  private pollTimer: ReturnType<typeof setTimeout> | undefined;
  private view: StatusView;
  /** Fires after every change of what the item shows. */
  readonly onDidChange = this.changeEmitter.event;
  private readonly refreshEmitter = new vscode.EventEmitter<IndexStatus>();
  /** Fires with every index status the server answers. */
  readonly onDidRefresh = this.refreshEmitter.event;

  constructor(private readonly server: FiskServer) {
    this.item = vscode.window.createStatusBarItem('fisk.status', vscode.StatusBarAlignment.Left, 10);
    this.item.name = 'Fisk';
    this.item.command = Commands.showStatus;
    this.view = statusView(server.state);
    this.render();
    this.item.show();
    this.disposables.push(
      this.item,
      this.changeEmitter,
      this.refreshEmitter,
      server.onDidChangeState((state) => {
        if (state.kind !== 'running') {
          this.status = undefined;
          this.indexing = undefined;
          this.degradedReason = undefined;
        }
        this.render();
        if (state.kind === 'running') {
          void this.refresh();
        }
      }),
      server.onDidProgress((progress) => this.onProgress(progress)),
    );
  }

  /** The current text and tooltip (for the extension API and tests). */
  snapshot(): StatusView {
    return { ...this.view };
  }

  /** Every search result says whether search is degraded (and why); the item follows it. */
  noteSearch(result: SearchResult): void {
    const reason = result.degraded ? (result.reason ?? result.tier) : undefined;
    if (reason !== this.degradedReason) {
      this.degradedReason = reason;
      this.render();
    }
  }

  /** Asks the server for `fisk.knowledge.status` and shows it; polls while the server reports indexing. */
  async refresh(): Promise<IndexStatus | undefined> {
    clearTimeout(this.pollTimer);
    if (this.server.state.kind !== 'running') {
      return undefined;
    }
    try {
      this.status = await this.server.request<IndexStatus>(ServerCommands.status);
    } catch (error) {
      logWarn(`index status failed: ${errorMessage(error)}`);
      return undefined;
    }
    this.render();
    this.refreshEmitter.fire(this.status);
    const cov = coverage(this.status);
    if (this.status.indexing && this.indexing === undefined) {
      this.pollTimer = setTimeout(() => void this.refresh(), 2000);
    } else if (cov !== undefined && cov.embedded < cov.chunks) {
      this.pollTimer = setTimeout(() => void this.refresh(), COVERAGE_POLL_MS);
    }
    return this.status;
  }

  dispose(): void {
    clearTimeout(this.pollTimer);
    vscode.Disposable.from(...this.disposables).dispose();
  }

  private onProgress(progress: IndexProgress): void {
    if (progress.kind === 'end') {
      this.indexing = undefined;
      this.render();
      void this.refresh();
      return;
    }
    this.indexing = {
      message: progress.message ?? this.indexing?.message,
      percentage: progress.percentage ?? this.indexing?.percentage,
    };
    this.render();
  }

  private render(): void {
    const view = statusView(this.server.state, this.status, this.indexing, this.degradedReason);
    this.item.text = view.text;
    this.item.tooltip = view.tooltip;
    this.item.backgroundColor =
      view.severity === 'normal' ? undefined : new vscode.ThemeColor(`statusBarItem.${view.severity}Background`);
    const changed = view.text !== this.view.text || view.tooltip !== this.view.tooltip;
    this.view = view;
    if (changed) {
      this.changeEmitter.fire(view);
    }
  }
}
