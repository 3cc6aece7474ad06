// Secret redaction cost on every tool result: a 30 KB output (ordinary build and git output with
// a few secrets in it), the same output streamed in 4 KB chunks, ordinary output with no secret,
// and hostile inputs shaped to make the patterns backtrack. Prints one JSON line.
import { redactSecrets } from '../src/core/security/secrets';
import { StreamRedactor } from '../src/core/security/streamRedactor';

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
const worst: Record<string, number> = {};
for (const [name, text] of Object.entries(hostile)) worst[name] = measure(() => redactSecrets(text, known), 50).max_ms;
result.hostile_30kb_max_ms = worst;
result.node = process.version;
process.stdout.write(`${JSON.stringify(result)}\n`);
