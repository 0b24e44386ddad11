import * as fs from 'node:fs';
import * as path from 'node:path';
import * as vscode from 'vscode';
import { logError, logInfo } from './log';
import { findPython, lastLines, run } from './python';

/**
 * First use without `fisk-ls` on PATH: the extension installs the fisk-ls wheel it ships
 * (`server/fisk_ls-*.whl` in the extension) into a virtual environment of its own under its global
 * storage, with progress, and starts the server from there. The environment is made again when the
 * bundled wheel changes (an extension update). The dependencies come from the package index pip is
 * configured with (PyPI by default), like `pip install` of the wheel by hand.
 */

const STAMP = 'fisk-installed-wheel.txt';

export type SetupResult = { executable: string } | { problem: string } | undefined;

export interface ServerEnvironment {
  /** The environment's folder. */
  dir: string;
  python: string;
  executable: string;
}

export function environmentAt(dir: string, platform: NodeJS.Platform = process.platform): ServerEnvironment {
  const bin = platform === 'win32' ? path.join(dir, 'Scripts') : path.join(dir, 'bin');
  const exe = platform === 'win32' ? '.exe' : '';
  return { dir, python: path.join(bin, `python${exe}`), executable: path.join(bin, `fisk-ls${exe}`) };
}

/** The newest fisk-ls wheel in `folder`, or undefined. */
export function bundledWheel(folder: string): string | undefined {
  let names: string[];
  try {
    names = fs.readdirSync(folder);
  } catch {
    return undefined;
  }
  const wheels = names.filter((n) => /^fisk_ls-[^-]+-.*\.whl$/.test(n)).sort();
  const last = wheels[wheels.length - 1];
  return last === undefined ? undefined : path.join(folder, last);
}

export class ServerSetup {
  private running: Promise<SetupResult> | undefined;

  constructor(
    /** Where the extension's files are (`server/` holds the wheel). */
    private readonly extensionDir: string,
    /** The extension's global storage: the environment goes in `server/` under it. */
    private readonly storageDir: string,
  ) {}

  get environment(): ServerEnvironment {
    return environmentAt(path.join(this.storageDir, 'server'));
  }

  get wheel(): string | undefined {
    return bundledWheel(path.join(this.extensionDir, 'server'));
  }

  /** The managed environment's fisk-ls when it is set up with the bundled wheel, else undefined. */
  installed(): string | undefined {
    const wheel = this.wheel;
    const env = this.environment;
    try {
      const stamp = fs.readFileSync(path.join(env.dir, STAMP), 'utf8').trim();
      return wheel !== undefined && stamp === path.basename(wheel) && fs.existsSync(env.executable) ? env.executable : undefined;
    } catch {
      return undefined;
    }
  }

  /**
   * The managed fisk-ls, set up now when needed (one run at a time): its path, a problem to show, or
   * undefined when the extension bundles no wheel (then the usual "not found" message applies).
   */
  ensure(): Promise<SetupResult> {
    const ready = this.installed();
    if (ready !== undefined) {
      return Promise.resolve({ executable: ready });
    }
    const wheel = this.wheel;
    if (wheel === undefined) {
      return Promise.resolve(undefined);
    }
    this.running ??= this.install(wheel).finally(() => (this.running = undefined));
    return this.running;
  }

  private async install(wheel: string): Promise<SetupResult> {
    const lookup = await findPython();
    if ('problem' in lookup) {
      logError(lookup.problem);
      return { problem: lookup.problem };
    }
    const env = this.environment;
    const name = path.basename(wheel);
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: 'Fisk: setting up the fisk-ls server (first use)' },
      async (progress) => {
        progress.report({ message: `a Python ${lookup.python.version} environment…` });
        logInfo(`setting up ${name} in ${env.dir} with ${lookup.python.path}`);
        fs.rmSync(env.dir, { recursive: true, force: true });
        fs.mkdirSync(path.dirname(env.dir), { recursive: true });
        const venv = await run(lookup.python.path, ['-m', 'venv', env.dir], (line) => logInfo(`venv: ${line}`));
        if (venv.code !== 0) {
          return failed(`${lookup.python.path} -m venv failed: ${lastLines(venv.output)}`);
        }
        progress.report({ message: `installing ${name} and its dependencies…` });
        const pip = await run(env.python, ['-m', 'pip', 'install', '--disable-pip-version-check', '--no-input', wheel], (line) => {
          logInfo(`pip: ${line}`);
          const step = /^(Collecting|Downloading|Installing collected packages|Successfully installed|Using cached)\b.*/.exec(line.trim());
          if (step) {
            progress.report({ message: step[0].slice(0, 100) });
          }
        });
        if (pip.code !== 0 || !fs.existsSync(env.executable)) {
          return failed(`pip install of ${name} failed: ${lastLines(pip.output)}`);
        }
        fs.writeFileSync(path.join(env.dir, STAMP), `${name}\n`);
        logInfo(`fisk-ls is set up: ${env.executable}`);
        return { executable: env.executable };
      },
    );
  }
}

function failed(message: string): SetupResult {
  const problem = `Fisk could not set up its server: ${message}. See "Fisk: Show Log"; or install fisk-ls yourself and set "fisk.server.command" to it.`;
  logError(problem);
  return { problem };
}
