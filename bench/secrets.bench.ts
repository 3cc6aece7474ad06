// Secret redaction cost on every tool result: a 30 KB output (ordinary build and git output with
// a few secrets in it), the same output streamed in 4 KB chunks, ordinary output with no secret,
// and hostile inputs shaped to make the patterns backtrack. And the scan of a checkpoint's
// before-image (containsSecret, src/core/checkpoints/recorder.ts): 100 KB of source (this
// repository's src/, concatenated in a fixed order, ten different 100 KB slices), side by side
// with the scan as it was before it was made cheaper (test/unit/security/secretScanOracle.ts, the
// oracle the unit tests hold the scan to: every pattern at every position, every secretlint rule
// on every text). Prints one JSON line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { containsSecret, findSecrets, redactSecrets } from '../src/core/security/secrets';
import { StreamRedactor } from '../src/core/security/streamRedactor';
import { oldFindSecrets } from '../test/unit/security/secretScanOracle';

const KB30 = 30_000;
const ordinaryLines = [
  'commit 3f2a9c1d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a39',
  'Author: Jane Doe <jane@example.com>',
  ' src/core/security/secrets.ts | 12 ++++++++----',
  '{"id":"550e8400-e29b-41d4-a716-446655440000","data":"SGVsbG8gd29ybGQgdGhpcyBpcyBub3JtYWwgdGV4dA=="}',
  '  ✓ test/unit/tools/bash.test.ts (12 tests) 6391ms',
  'const token = process.env.GITHUB_TOKEN; // read at start',
  'drwxr-xr-x  5 jane staff   160 May  7 10:00 node_modules',
  'npm warn deprecated inflight@1.0.6: This module is not supported, and leaks memory.',
];
function fill(lines: string[], size: number): string {
  let s = '';
  for (let i = 0; s.length < size; i++) s += `${lines[i % lines.length]}\n`;
  return s.slice(0, size);
}
const ordinary = fill(ordinaryLines, KB30);
const withSecrets =
  ordinary.slice(0, 10_000) +
  `ANTHROPIC_API_KEY=sk-ant-api03-${'Ab3_'.repeat(23)}xAA\nAWS=AKIAZ7Q4PJMW2XK9TB3R\n` +
  ordinary.slice(10_000, 20_000) +
  `origin https://x-access-token:ghp_${'aB3d'.repeat(9)}@github.com/o/r.git\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA${'q'.repeat(48)}\n-----END RSA PRIVATE KEY-----\n` +
  ordinary.slice(20_000);
const hostile = {
  'sk-dashes': fill(['sk-' + 'a-'.repeat(400)], KB30),
  'names-without-values': fill(['a_secret_token_password_api_key_'.repeat(40)], KB30),
  'url-users': fill(['https://' + 'u'.repeat(200) + ':' + 'p'.repeat(200)], KB30),
  'begin-no-end': fill(['-----BEGIN RSA PRIVATE KEY-----'], KB30),
  'slack-like': fill(['xoxb-' + '1-'.repeat(500)], KB30),
  'one-long-word': 'a'.repeat(KB30),
  // Dense with what the shortcuts look for: a secret name's end at every word, a '://' everywhere.
  'name-ends': fill(['a_key=x b_token: c_secret '], KB30),
  'schemes': fill(['a://b:c@'], KB30),
};
const known = ['local-ollama-key-42', 'sk-ant-api03-not-in-this-output-xx'];

function measure(fn: () => void, runs: number): { p50_ms: number; p99_ms: number; max_ms: number } {
  for (let i = 0; i < 20; i++) fn();
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => Number((samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number).toFixed(3));
  return { p50_ms: at(0.5), p99_ms: at(0.99), max_ms: at(1) };
}

const streamed = () => {
  const r = new StreamRedactor(() => known);
  for (let i = 0; i < withSecrets.length; i += 4096) r.push(withSecrets.slice(i, i + 4096));
  r.end();
};
const result: Record<string, unknown> = {
  output_chars: withSecrets.length,
  redact_30kb_with_secrets: measure(() => redactSecrets(withSecrets, known), 500),
  redact_30kb_ordinary: measure(() => redactSecrets(ordinary, known), 500),
  stream_30kb_in_4kb_chunks: measure(streamed, 300),
  secrets_found: (redactSecrets(withSecrets, known).match(/\[REDACTED:/g) ?? []).length,
};

/** This repository's sources, concatenated in a fixed order (as bench/checkpoints.bench.ts does). */
function sources(): string {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|tsx)$/.test(name)) out.push(readFileSync(p, 'utf8'));
    }
  };
  walk(join(__dirname, '..', '..', 'src'));
  return out.join('');
}
const KB100 = 100 * 1024;
const source = sources();
const slices = Array.from({ length: 10 }, (_, i) => source.slice(i * KB100, (i + 1) * KB100)).filter((s) => s.length === KB100);
/** Median over rounds, each round timing every slice once, new and old in alternation. */
function perSlice(fns: Record<string, (t: string) => unknown>, rounds: number): Record<string, number> {
  const samples: Record<string, number[]> = Object.fromEntries(Object.keys(fns).map((k) => [k, []]));
  for (let r = 0; r < rounds + 3; r++) {
    for (const text of slices) {
      for (const [k, fn] of Object.entries(fns)) {
        const t0 = process.hrtime.bigint();
        fn(text);
        if (r >= 3) samples[k]!.push(Number(process.hrtime.bigint() - t0) / 1e6);
      }
    }
  }
  return Object.fromEntries(Object.entries(samples).map(([k, xs]) => [k, Number(xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)]!.toFixed(3))]));
}
const scan = perSlice({ contains: (t) => containsSecret(t), find: (t) => findSecrets(t), old: (t) => oldFindSecrets(t) }, 30);
result.scan_100kb_source = {
  slices: slices.length,
  contains_ms: scan.contains,
  find_ms: scan.find,
  whole_text_scan_ms: scan.old,
  contains_speedup: Number(((scan.old ?? 0) / (scan.contains ?? 1)).toFixed(2)),
  flagged_slices: slices.filter((t) => containsSecret(t)).length,
};
const worst: Record<string, number> = {};
const worstOld: Record<string, number> = {};
for (const [name, text] of Object.entries(hostile)) {
  worst[name] = measure(() => redactSecrets(text, known), 50).max_ms;
  worstOld[name] = measure(() => oldFindSecrets(text), 50).max_ms;
}
result.hostile_30kb_max_ms = worst;
// The same inputs through the scan as it was (its redaction step left out): the shortcuts must not
// have made a hostile input slower.
result.hostile_30kb_whole_text_scan_max_ms = worstOld;
result.node = process.version;
process.stdout.write(`${JSON.stringify(result)}\n`);
