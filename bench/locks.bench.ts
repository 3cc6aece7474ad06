// Lock manager cost: uncontended acquire/release in microseconds, and contended throughput
// (many waiters on one key, and on several keys at once). Prints one JSON line.
import { LockManager } from '../src/core/locks/lockManager';

async function uncontended(n: number): Promise<number> {
  const locks = new LockManager();
  const t0 = process.hrtime.bigint();
  for (let i = 0; i < n; i++) (await locks.acquire('task:a')).release();
  return Number(process.hrtime.bigint() - t0) / 1e3 / n;
}

async function contended(waiters: number, rounds: number, keys: number): Promise<number> {
  const locks = new LockManager();
  let ops = 0;
  const t0 = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: waiters }, async (_, w) => {
      for (let r = 0; r < rounds; r++) {
        await locks.runExclusive(`task:${w % keys}`, async () => {
          ops++;
        });
      }
    }),
  );
  const s = Number(process.hrtime.bigint() - t0) / 1e9;
  return ops / s;
}

async function main() {
  await uncontended(20_000); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < 5; i++) samples.push(await uncontended(50_000));
  samples.sort((a, b) => a - b);
  const result = {
    uncontended_acquire_release_us: Number(samples[2]!.toFixed(3)),
    contended_ops_per_s_1_key_32_waiters: Math.round(await contended(32, 2000, 1)),
    contended_ops_per_s_8_keys_32_waiters: Math.round(await contended(32, 2000, 8)),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
void main();
