/* A tiny sequential test runner for the extension host: results go to $RESULTS_FILE and the console. */
import * as fs from 'node:fs';

type Body = () => Promise<void>;
const tests: { name: string; body: Body; timeoutMs: number }[] = [];

export function test(name: string, body: Body, timeoutMs = 30000): void {
  tests.push({ name, body, timeoutMs });
}

/** Polls `probe` until it returns a truthy value; throws `what` on timeout. */
export async function waitFor<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 20000): Promise<Exclude<T, false | 0 | '' | null | undefined>> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) {
        return value as Exclude<T, false | 0 | '' | null | undefined>;
      }
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const lines: string[] = [];

/** A `# …` line in the results (e.g. why a check was skipped). */
export function note(text: string): void {
  lines.push(`# ${text}`);
  console.log(`# ${text}`);
}

export async function runAll(): Promise<void> {
  const out = (line: string) => {
    lines.push(line);
    console.log(line);
    if (process.env.RESULTS_FILE) {
      fs.writeFileSync(process.env.RESULTS_FILE, lines.join('\n') + '\n');
    }
  };
  let passed = 0;
  let failed = 0;
  for (const t of tests) {
    const started = Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    try {
      await Promise.race([
        t.body(),
        new Promise((_, reject) => (timer = setTimeout(() => reject(new Error(`timeout after ${t.timeoutMs} ms`)), t.timeoutMs))),
      ]);
      passed++;
      out(`ok   - ${t.name} (${Date.now() - started} ms)`);
    } catch (error) {
      failed++;
      out(`FAIL - ${t.name}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
    } finally {
      clearTimeout(timer);
    }
  }
  out(`${passed} passed, ${failed} failed`);
  if (failed > 0) {
    throw new Error(`${failed} extension-host test(s) failed`);
  }
}
