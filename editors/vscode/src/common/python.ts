import { spawn } from 'node:child_process';
import { findExecutable } from './executable';

/** The outcome of one process run: exit code and its output (stdout and stderr together). */
export interface RunResult {
  code: number;
  output: string;
}

/** Runs `command args`; `onLine` sees each output line as it comes. Never rejects on a non-zero exit. */
export function run(command: string, args: readonly string[], onLine?: (line: string) => void, env?: NodeJS.ProcessEnv): Promise<RunResult> {
  return new Promise((resolve) => {
    let output = '';
    let partial = '';
    const child = spawn(command, args, { env: env ?? process.env, stdio: ['ignore', 'pipe', 'pipe'] });
    const take = (chunk: Buffer) => {
      const text = chunk.toString('utf8');
      output += text;
      partial += text;
      const lines = partial.split(/\r?\n/);
      partial = lines.pop() ?? '';
      lines.filter((l) => l.trim() !== '').forEach((l) => onLine?.(l));
    };
    child.stdout.on('data', take);
    child.stderr.on('data', take);
    child.on('error', (error) => resolve({ code: -1, output: `${output}${error.message}` }));
    child.on('close', (code) => resolve({ code: code ?? -1, output }));
  });
}

/** The last `n` non-empty lines of a process's output, for an error message. */
export function lastLines(output: string, n = 3): string {
  return output
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean)
    .slice(-n)
    .join(' ');
}

export const MIN_PYTHON: readonly [number, number] = [3, 10];

/** A Python interpreter that can make a virtual environment. */
export interface Python {
  path: string;
  version: string;
}

export type PythonLookup = { python: Python } | { problem: string };

const PROBE = 'import sys, venv, ensurepip; print("%d.%d" % sys.version_info[:2])';

/**
 * The first of `python3`, `python` (Windows: also `py`) on PATH that is 3.10+ and has `venv` with
 * `ensurepip`; otherwise why none will do, in one sentence.
 */
export async function findPython(env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): Promise<PythonLookup> {
  const names = platform === 'win32' ? ['python', 'py', 'python3'] : ['python3', 'python'];
  const seen: string[] = [];
  for (const name of names) {
    const path = await findExecutable(name, env, platform);
    if (path === undefined) {
      continue;
    }
    const probe = await run(path, name === 'py' ? ['-3', '-c', PROBE] : ['-c', PROBE], undefined, env);
    const version = /^(\d+)\.(\d+)\s*$/m.exec(probe.output);
    if (probe.code === 0 && version !== null) {
      const [major, minor] = [Number(version[1]), Number(version[2])];
      if (major > MIN_PYTHON[0] || (major === MIN_PYTHON[0] && minor >= MIN_PYTHON[1])) {
        return { python: { path, version: `${major}.${minor}` } };
      }
      seen.push(`${path} is Python ${major}.${minor}`);
    } else if (/No module named '?(venv|ensurepip)/.test(probe.output)) {
      seen.push(`${path} has no venv module (on Debian and Ubuntu: apt install python3-venv)`);
    } else {
      seen.push(`${path} did not run (${lastLines(probe.output, 1) || `exit ${probe.code}`})`);
    }
  }
  const need = `Python ${MIN_PYTHON.join('.')} or newer`;
  return {
    problem:
      seen.length === 0
        ? `Fisk needs ${need} to set up its server, and there is no python3 or python on PATH. Install Python (python.org, or your system's package manager), then run "Fisk: Restart Server"; or install fisk-ls yourself and set "fisk.server.command" to it.`
        : `Fisk needs ${need} with venv to set up its server: ${seen.join('; ')}. Install it, then run "Fisk: Restart Server"; or install fisk-ls yourself and set "fisk.server.command" to it.`,
  };
}
