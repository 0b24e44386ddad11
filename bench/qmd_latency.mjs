// qmd's in-process BM25 latency through its SDK (createStore + searchLex, the call `qmd search`
// makes), timed with performance.now() around each awaited call, after one warm-up pass.
//
//   node bench/qmd_latency.mjs QMD_PACKAGE_DIR DB_PATH CONFIG_YAML ROUNDS LIMIT QUERY...
//
// Prints one JSON object: {"ms": [per-call milliseconds], "hits": {query: count}}.
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [pkg, dbPath, configPath, rounds, limit, ...queries] = process.argv.slice(2);
const { createStore } = await import(pathToFileURL(join(pkg, "dist", "index.js")).href);
const store = await createStore({ dbPath, configPath });
const n = Number(limit);
const hits = {};
for (const q of queries) hits[q] = (await store.searchLex(q, { limit: n })).length;
const ms = [];
for (let r = 0; r < Number(rounds); r++) {
  for (const q of queries) {
    const t = performance.now();
    await store.searchLex(q, { limit: n });
    ms.push(performance.now() - t);
  }
}
await store.close();
process.stdout.write(JSON.stringify({ ms, hits }) + "\n");
