import { constants as fsConstants, promises as fs } from 'node:fs';
import * as path from 'node:path';

/**
 * Resolves a command the way a shell would: a value with a path separator must point at an
 * executable file; a bare name is looked up on PATH (with PATHEXT on Windows).
 * Returns the absolute path, or undefined when nothing executable is found.
 */
export async function findExecutable(
  command: string,
  env: NodeJS.ProcessEnv = process.env,
  platform: NodeJS.Platform = process.platform,
): Promise<string | undefined> {
  if (command === '') {
    return undefined;
  }
  const extensions = platform === 'win32' ? ['', ...(env.PATHEXT ?? '.EXE;.CMD;.BAT;.COM').split(';').filter(Boolean)] : [''];
  if (command.includes('/') || (platform === 'win32' && command.includes('\\'))) {
    return firstExecutable(extensions.map((ext) => path.resolve(command + ext)), platform);
  }
  const dirs = (env.PATH ?? env.Path ?? '').split(platform === 'win32' ? ';' : ':').filter(Boolean);
  return firstExecutable(
    dirs.flatMap((dir) => extensions.map((ext) => path.join(dir, command + ext))),
    platform,
  );
}

async function firstExecutable(candidates: string[], platform: NodeJS.Platform): Promise<string | undefined> {
  for (const candidate of candidates) {
    if (await isExecutableFile(candidate, platform)) {
      return candidate;
    }
  }
  return undefined;
}

async function isExecutableFile(file: string, platform: NodeJS.Platform): Promise<boolean> {
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile()) {
      return false;
    }
    if (platform !== 'win32') {
      await fs.access(file, fsConstants.X_OK);
    }
    return true;
  } catch {
    return false;
  }
}
