// Builds the extension bundle (dist/extension.js) or, with --tests, transpiles src/ to out/
// file by file (no bundling) so unit tests can swap the `vscode` module for a mock.
// Type checking is separate: `npm run typecheck` (tsc --noEmit).
import { build } from 'esbuild';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const here = new URL('..', import.meta.url).pathname;
const tests = process.argv.includes('--tests');

function tsFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

if (tests) {
  await build({
    entryPoints: tsFiles(join(here, 'src')),
    outdir: join(here, 'out'),
    outbase: join(here, 'src'),
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    sourcemap: 'inline',
    logLevel: 'warning',
  });
} else {
  await build({
    entryPoints: [join(here, 'src/extension.ts')],
    outfile: join(here, 'dist/extension.js'),
    bundle: true,
    format: 'cjs',
    platform: 'node',
    target: 'node20',
    external: ['vscode'],
    minify: !process.argv.includes('--dev'),
    keepNames: true,
    sourcemap: process.argv.includes('--dev') ? 'linked' : false,
    logLevel: 'warning',
  });
}
