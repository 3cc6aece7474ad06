// Decision latency over the whole permission corpus (test/unit/permissions/corpus): every Bash
// case of every group, against its group's fixture (settings, git repositories…), parse
// included. Each case is decided once to warm caches, then timed `ROUNDS` times. Prints one JSON
// line: wall-clock p50, p99 and the slowest case, and the same quantiles of the process's CPU
// time per decision (robust when other processes load the machine). The bounds group (inputs
// built to hit the analysis limits: deep nesting, huge commands) is reported on its own
// (`bounds_*`), so the quantiles of ordinary decisions are not mixed with the worst cases.
import { CORPUS } from '../test/unit/permissions/corpus';
import { BOUNDS_GROUP } from '../test/unit/permissions/corpus/bounds';
import { makeFixture } from '../test/unit/permissions/fixture';

const ROUNDS = 20;

interface Series {
  wall: number[];
  cpu: number[];
  slowest: { ms: number; command: string };
  cases: number;
}

const series = (): Series => ({ wall: [], cpu: [], slowest: { ms: 0, command: '' }, cases: 0 });
const quantile = (xs: number[], q: number): number => (xs.length === 0 ? 0 : Number((xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number).toFixed(3)));

async function main(): Promise<void> {
  const ordinary = series();
  const bounds = series();
  for (const g of CORPUS) {
    if (!g.bash?.length) continue;
    const s = g === BOUNDS_GROUP ? bounds : ordinary;
    const fx = await makeFixture(g.settings, g.protectedFiles ? { protectedFiles: g.protectedFiles } : {});
    try {
      g.prepare?.(fx);
      for (const c of g.bash) await fx.bash(c.command, c.mode ?? 'default');
      for (let r = 0; r < ROUNDS; r++) {
        for (const c of g.bash) {
          const c0 = process.cpuUsage();
          const t0 = process.hrtime.bigint();
          await fx.bash(c.command, c.mode ?? 'default');
          const ms = Number(process.hrtime.bigint() - t0) / 1e6;
          const used = process.cpuUsage(c0);
          s.wall.push(ms);
          s.cpu.push((used.user + used.system) / 1000);
          if (ms > s.slowest.ms) s.slowest = { ms, command: c.command };
        }
      }
      s.cases += g.bash.length;
    } finally {
      fx.cleanup();
    }
  }
  for (const s of [ordinary, bounds]) {
    s.wall.sort((a, b) => a - b);
    s.cpu.sort((a, b) => a - b);
  }
  process.stdout.write(
    `${JSON.stringify({
      decision_p50_ms: quantile(ordinary.wall, 0.5),
      decision_p99_ms: quantile(ordinary.wall, 0.99),
      decision_max_ms: Number(ordinary.slowest.ms.toFixed(3)),
      cpu_p50_ms: quantile(ordinary.cpu, 0.5),
      cpu_p99_ms: quantile(ordinary.cpu, 0.99),
      slowest_command: ordinary.slowest.command.slice(0, 80),
      cases: ordinary.cases,
      samples: ordinary.wall.length,
      bounds_p50_ms: quantile(bounds.wall, 0.5),
      bounds_p99_ms: quantile(bounds.wall, 0.99),
      bounds_max_ms: Number(bounds.slowest.ms.toFixed(3)),
      bounds_cpu_p99_ms: quantile(bounds.cpu, 0.99),
      bounds_slowest_command: bounds.slowest.command.slice(0, 80),
      bounds_cases: bounds.cases,
      node: process.version,
    })}\n`,
  );
}
void main();
