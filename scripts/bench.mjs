// The benchmark runner (`npm run bench [-- name…]`, through scripts/bench.sh which installs the
// node dependencies first): bundles each bench/*.bench.ts with esbuild, runs it in its own Node
// process (with --expose-gc), and writes the JSON it prints to bench/results/<name>.json (ignored
// by git; docs/benchmarks.md keeps reference figures). Names select benches by prefix.
// Before the webview bench: Chromium (scripts/e2e/ensure-deps.sh --packages-only) and a fresh
// build of dist/ (the bench loads dist/webview.js). A bench that fails (e.g. a wrong permission
// decision) prints why, writes no result, and makes the run exit 1 after the other benches.
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const only = process.argv.slice(2);
const all = readdirSync('bench').filter((f) => f.endsWith('.bench.ts'));
const benches = all.filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)));
const unmatched = only.filter((o) => !all.some((f) => f.startsWith(o)));
if (unmatched.length > 0) {
  process.stderr.write(`bench: no bench named ${unmatched.map((o) => `"${o}"`).join(', ')} (there are: ${all.map((f) => f.replace(/\.bench\.ts$/, '')).join(', ')})\n`);
  process.exit(2);
}

if (benches.includes('webview.bench.ts')) {
  process.stderr.write('bench: Chromium and a fresh dist/ for the webview bench…\n');
  execFileSync('bash', ['scripts/e2e/ensure-deps.sh', '--packages-only'], { stdio: ['ignore', 'ignore', 'inherit'] });
  execFileSync(process.execPath, ['scripts/build.mjs'], { stdio: ['ignore', 'ignore', 'inherit'] });
}

// Imported here, not at the top: on a fresh clone scripts/bench.sh has just installed it.
const esbuild = await import('esbuild');
mkdirSync('.cache/bench', { recursive: true });
mkdirSync('bench/results', { recursive: true });
const failed = [];
for (const file of benches) {
  const name = file.replace(/\.bench\.ts$/, '');
  const out = join('.cache/bench', `${name}.cjs`);
  await esbuild.build({ entryPoints: [join('bench', file)], outfile: out, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning', external: ['playwright-core', 'esbuild'] });
  process.stderr.write(`bench ${name}… `);
  let stdout;
  try {
    stdout = execFileSync(process.execPath, ['--expose-gc', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
  } catch (err) {
    process.stderr.write(`FAILED (exit ${err.status ?? err.signal}); bench/results/${name}.json not written\n`);
    failed.push(name);
    continue;
  }
  const json = JSON.parse(stdout.trim().split('\n').pop());
  writeFileSync(join('bench/results', `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  process.stderr.write('done\n');
  process.stdout.write(`${name}: ${JSON.stringify(json)}\n`);
}
if (failed.length > 0) {
  process.stderr.write(`bench: ${failed.join(', ')} failed\n`);
  process.exit(1);
}
