// Permission decision latency over the project's corpus: every case of every group listed in
// test/unit/permissions/corpus/index.ts (Bash commands, file tools, WebFetch domains), each
// against its group's own fixture (test/unit/permissions/fixture.ts: a real workspace on disk,
// the group's settings, its `prepare`), decided the way corpus.test.ts decides it
// (corpus/decisions.ts). Every decision is checked against the case's expected one while timing:
// a wrong decision ends the bench with an error, not a figure.
//   decision_cold_ms   a fresh Node process: createPermissionEngine (the tree-sitter wasm load,
//                      the settings read) + the first decision (the corpus' first Bash case);
//                      median of 5 processes, wall time
//   decision_cold_cpu_ms      the same interval's CPU time (what the machine's load cannot inflate)
//   decision_cold_since_start_ms  from the process's start to that decision's end: Node's own
//                      start and loading the bundle included
//   load_average       the machine's load while it ran (wall times on a shared machine follow it)
//   decision_p50_ms / decision_p99_ms
//                      warm: ROUNDS rounds over the whole corpus after one warm-up round;
//                      quantiles of the wall time over every sample (goal: p99 ≤ 5 ms)
//   decision_cpu_p50_ms / decision_cpu_p99_ms
//                      the same decisions' CPU time (process.cpuUsage: all threads of the
//                      process). Wall time is what a person waits; on a shared, loaded machine it
//                      mostly measures the scheduler, and CPU time shows what the engine costs
//   compound_1kb_*     one ~1 KB compound command (the previous figure), repeated
// Prints one JSON line.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { createPermissionEngine, type EngineDecision } from '../src/core/permissions';
import type { PermissionMode } from '../src/core/runtime/types';
import { parseToolInput } from '../src/core/tools/execute';
import { createToolRegistry } from '../src/core/tools/registry';
import { CORPUS } from '../test/unit/permissions/corpus/index';
import { decisionsOf, type CorpusDecision } from '../test/unit/permissions/corpus/decisions';
import { makeFixture, type PermissionFixture } from '../test/unit/permissions/fixture';

const ROUNDS = 20;
const COLD_RUNS = 5;
const COMPOUND_SAMPLES = 500;

class WrongDecision extends Error {}

function check(c: Pick<CorpusDecision, 'group' | 'label' | 'expect'>, d: EngineDecision): void {
  if (d.decision !== c.expect) throw new WrongDecision(`corpus group "${c.group}": ${c.label} was decided ${d.decision} (${d.reason}); the corpus expects ${c.expect}`);
}

/** Wall time of one decision in ms; its CPU time is pushed to `cpu` when given. */
async function timed(c: CorpusDecision, fx: PermissionFixture, cpu?: number[]): Promise<number> {
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  const d = await c.decide(fx);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const used = process.cpuUsage(c0);
  cpu?.push((used.user + used.system) / 1000);
  check(c, d);
  return ms;
}

/**
 * The child side of decision_cold_ms: nothing of the engine is loaded yet in this process.
 * Builds the call as the runtime does (the real tool's subject) and prints the elapsed ms.
 */
async function coldChild(arg: string): Promise<void> {
  const { ws, home, command, mode, expect, group } = JSON.parse(arg) as { ws: string; home: string; command: string; mode: PermissionMode; expect: CorpusDecision['expect']; group: string };
  const parsed = parseToolInput(createToolRegistry(), 'Bash', { command });
  if (!parsed.ok) throw new Error(`bad Bash input: ${parsed.result.content}`);
  const c0 = process.cpuUsage();
  const t0 = process.hrtime.bigint();
  // The corpus measures the engine on the corpus's rules, as a workspace the person approved.
  const engine = await createPermissionEngine({ workspace: ws, home, trust: { approves: () => true, version: () => 0 } });
  const subject = parsed.tool.subject(parsed.input as never, { workspace: ws });
  const d = await engine.decide({ tool: 'Bash', input: parsed.input, subject, readOnly: parsed.tool.readOnly }, mode);
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  const used = process.cpuUsage(c0);
  check({ group, label: `Bash ${JSON.stringify(command)}`, expect }, d);
  process.stdout.write(`${JSON.stringify({ ms, cpuMs: (used.user + used.system) / 1000, sinceStartMs: performance.now() })}\n`);
}

function compoundCommand(): string {
  const parts = [
    'cd src && npm run test -- --watch=false 2>&1 | tee ../test.log',
    'git status --porcelain | grep -v "^??" | wc -l',
    'for f in $(git diff --name-only HEAD~1); do echo "$f"; done',
    // (below src: grep reads every file find hands it, and the fixture's `.` holds a link to a denied file)
    "find src -name '*.ts' -not -path './node_modules/*' -exec grep -l TODO {} +",
    'timeout 60 make -j4 build > build.log || echo "build failed: $?"',
    "if [ -f package.json ]; then node -e 'console.log(1)'; fi",
    'NODE_ENV=test npx vitest run --reporter=dot',
  ];
  let cmd = '';
  for (let i = 0; cmd.length < 1024; i++) cmd += `${cmd ? ' && ' : ''}${parts[i % parts.length]}`;
  return cmd;
}

const quantile = (sorted: number[], q: number): number => Number((sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number).toFixed(3));
const sortNum = (xs: number[]) => xs.slice().sort((a, b) => a - b);

async function main(): Promise<void> {
  const fixtures: PermissionFixture[] = [];
  try {
    const cases: { c: CorpusDecision; fx: PermissionFixture }[] = [];
    for (const g of CORPUS) {
      const fx = await makeFixture(g.settings, g.protectedFiles ? { protectedFiles: g.protectedFiles } : {});
      fixtures.push(fx);
      g.prepare?.(fx);
      for (const c of decisionsOf(g)) cases.push({ c, fx });
    }
    if (cases.length === 0) throw new Error('the permission corpus is empty');

    // Cold: the first Bash case of the corpus, in fresh processes, against its group's fixture.
    const firstGroup = CORPUS.findIndex((g) => (g.bash ?? []).length > 0);
    const first = CORPUS[firstGroup]!.bash![0]!;
    const coldArg = JSON.stringify({ ws: fixtures[firstGroup]!.ws, home: fixtures[firstGroup]!.home, command: first.command, mode: first.mode ?? 'default', expect: first.expect, group: CORPUS[firstGroup]!.name });
    const cold: number[] = [];
    const coldCpu: number[] = [];
    const coldSinceStart: number[] = [];
    for (let i = 0; i < COLD_RUNS; i++) {
      const out = execFileSync(process.execPath, [process.argv[1]!, '--cold', coldArg], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] });
      const r = JSON.parse(out.trim().split('\n').pop()!) as { ms: number; cpuMs: number; sinceStartMs: number };
      cold.push(r.ms);
      coldCpu.push(r.cpuMs);
      coldSinceStart.push(r.sinceStartMs);
    }
    const median = (xs: number[]): number => Number(sortNum(xs)[Math.floor(xs.length / 2)]!.toFixed(1));

    // Warm: one round to warm up (checked too), then ROUNDS timed rounds over every case.
    for (const { c, fx } of cases) await timed(c, fx);
    const samples: number[] = [];
    const cpu: number[] = [];
    const perCase = cases.map(() => [] as number[]);
    const order = cases.map((_, i) => i);
    let seed = 1;
    for (let r = 0; r < ROUNDS; r++) {
      // A new order each round, so a periodic cost (a GC every so many decisions) does not land
      // on the same case every round and make it look slow.
      for (let k = order.length - 1; k > 0; k--) {
        seed = (seed * 1103515245 + 12345) % 2 ** 31;
        const j = seed % (k + 1);
        [order[k], order[j]] = [order[j]!, order[k]!];
      }
      for (const i of order) {
        const ms = await timed(cases[i]!.c, cases[i]!.fx, cpu);
        samples.push(ms);
        perCase[i]!.push(ms);
      }
    }
    const sorted = sortNum(samples);
    const slowest = cases
      .map(({ c }, i) => ({ case: `${c.group}/${c.cause}: ${c.label}`, median_ms: quantile(sortNum(perCase[i]!), 0.5) }))
      .sort((a, b) => b.median_ms - a.median_ms)
      .slice(0, 5);
    const byGroup = Object.fromEntries(
      CORPUS.map((g) => {
        const s = sortNum(cases.flatMap(({ c }, i) => (c.group === g.name ? perCase[i]! : [])));
        return [g.name, { cases: s.length / ROUNDS, p50_ms: quantile(s, 0.5), p99_ms: quantile(s, 0.99) }];
      }),
    );

    // The previous figure: one ~1 KB compound command (writes ../test.log, runs node -e: asks).
    const fx = await makeFixture();
    fixtures.push(fx);
    const command = compoundCommand();
    const compound: CorpusDecision = { group: 'compound', cause: 'compound', label: 'the 1 KB compound command', expect: 'ask', decide: (f) => f.bash(command) };
    for (let i = 0; i < 50; i++) await timed(compound, fx);
    const compoundSamples: number[] = [];
    for (let i = 0; i < COMPOUND_SAMPLES; i++) compoundSamples.push(await timed(compound, fx));
    const compoundSorted = sortNum(compoundSamples);

    process.stdout.write(
      `${JSON.stringify({
        decision_cold_ms: median(cold),
        decision_cold_ms_runs: cold.map((x) => Number(x.toFixed(1))),
        decision_cold_cpu_ms: median(coldCpu),
        decision_cold_since_start_ms: median(coldSinceStart),
        load_average: os.loadavg().map((x) => Number(x.toFixed(1))),
        decision_p50_ms: quantile(sorted, 0.5),
        decision_p99_ms: quantile(sorted, 0.99),
        decision_max_ms: quantile(sorted, 1),
        decision_cpu_p50_ms: quantile(sortNum(cpu), 0.5),
        decision_cpu_p99_ms: quantile(sortNum(cpu), 0.99),
        corpus_groups: CORPUS.length,
        corpus_cases: cases.length,
        rounds: ROUNDS,
        samples: samples.length,
        by_group: byGroup,
        slowest_cases: slowest,
        compound_1kb_p50_ms: quantile(compoundSorted, 0.5),
        compound_1kb_p99_ms: quantile(compoundSorted, 0.99),
        compound_1kb_bytes: Buffer.byteLength(command),
        goals: { decision_p99_ms: 5 },
        node: process.version,
      })}\n`,
    );
  } finally {
    for (const fx of fixtures) fx.cleanup();
  }
}

const coldAt = process.argv.indexOf('--cold');
(coldAt >= 0 ? coldChild(process.argv[coldAt + 1] ?? '{}') : main()).catch((err: unknown) => {
  process.stderr.write(`${err instanceof WrongDecision ? 'WRONG DECISION: ' : ''}${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
