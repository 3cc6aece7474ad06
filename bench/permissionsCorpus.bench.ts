// Decision latency over the whole permission corpus (test/unit/permissions/corpus): every Bash
// case of every group, against its group's fixture (settings, git repositories…), parse
// included. Each case is decided once to warm caches, then timed `ROUNDS` times. Prints one JSON
// line: wall-clock p50, p99 and the slowest case, and the same quantiles of the process's CPU
// time per decision (robust when other processes load the machine).
import { CORPUS } from '../test/unit/permissions/corpus';
import { makeFixture } from '../test/unit/permissions/fixture';

const ROUNDS = 20;

async function main(): Promise<void> {
  const samples: number[] = [];
  const cpu: number[] = [];
  let slowest = { ms: 0, command: '' };
  let cases = 0;
  for (const g of CORPUS) {
    if (!g.bash?.length) continue;
    const fx = await makeFixture(g.settings);
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
          samples.push(ms);
          cpu.push((used.user + used.system) / 1000);
          if (ms > slowest.ms) slowest = { ms, command: c.command };
        }
      }
      cases += g.bash.length;
    } finally {
      fx.cleanup();
    }
  }
  samples.sort((a, b) => a - b);
  cpu.sort((a, b) => a - b);
  const quantile = (xs: number[], q: number): number => Number((xs[Math.min(xs.length - 1, Math.floor(q * xs.length))] as number).toFixed(3));
  const at = (q: number): number => quantile(samples, q);
  process.stdout.write(
    `${JSON.stringify({ decision_p50_ms: at(0.5), decision_p99_ms: at(0.99), decision_max_ms: Number(slowest.ms.toFixed(3)), cpu_p50_ms: quantile(cpu, 0.5), cpu_p99_ms: quantile(cpu, 0.99), slowest_command: slowest.command.slice(0, 80), cases, samples: samples.length, node: process.version })}\n`,
  );
}
void main();
