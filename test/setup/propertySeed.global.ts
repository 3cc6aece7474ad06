/**
 * The seed of every property test (fast-check) in this run, chosen once and printed at the start:
 * KEEL_FC_SEED when set (to replay a failure), otherwise today's date (UTC, e.g. 20261127), so CI
 * explores new cases every day while every run of one day draws the same ones. A failing property
 * prints its seed and path too (fast-check's message); `KEEL_FC_SEED=<seed> npx vitest run <file>`
 * replays it. test/setup/propertySeed.ts hands the seed to fast-check in each test worker.
 */
export default function setup(): void {
  if (process.env.KEEL_FC_SEED_SHOWN === '1') return;
  const given = process.env.KEEL_FC_SEED;
  const seed = given && /^-?\d+$/.test(given) ? Number(given) : Number(new Date().toISOString().slice(0, 10).replaceAll('-', ''));
  process.env.KEEL_FC_SEED = String(seed);
  process.env.KEEL_FC_SEED_SHOWN = '1';
  process.stdout.write(`property tests: seed ${seed} (${given ? 'from KEEL_FC_SEED' : "today's; replay with KEEL_FC_SEED"}=${seed})\n`);
}
