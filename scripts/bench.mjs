// `npm run bench`: bundles each bench/*.bench.ts with esbuild, runs it in its own Node process
// (with --expose-gc), and writes the JSON it prints to bench/results/<name>.json.
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const only = process.argv.slice(2);
const benches = readdirSync('bench').filter((f) => f.endsWith('.bench.ts')).filter((f) => only.length === 0 || only.some((o) => f.startsWith(o)));
mkdirSync('.cache/bench', { recursive: true });
mkdirSync('bench/results', { recursive: true });
for (const file of benches) {
  const name = file.replace(/\.bench\.ts$/, '');
  const out = join('.cache/bench', `${name}.cjs`);
  await esbuild.build({ entryPoints: [join('bench', file)], outfile: out, bundle: true, platform: 'node', format: 'cjs', target: 'node20', logLevel: 'warning', external: ['playwright-core'] });
  process.stderr.write(`bench ${name}… `);
  const stdout = execFileSync(process.execPath, ['--expose-gc', out], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 * 1024 * 1024 });
  const json = JSON.parse(stdout.trim().split('\n').pop());
  writeFileSync(join('bench/results', `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  process.stderr.write('done\n');
  process.stdout.write(`${name}: ${JSON.stringify(json)}\n`);
}
