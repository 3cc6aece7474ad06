// Permission decision latency for a ~1 KB compound Bash command, parse included (tree-sitter-bash
// through web-tree-sitter), against a settings file with a few dozen rules. Prints one JSON line.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPermissionEngine } from '../src/core/permissions';

function compoundCommand(): string {
  const parts = [
    'cd src && npm run test -- --watch=false 2>&1 | tee ../test.log',
    'git status --porcelain | grep -v "^??" | wc -l',
    'for f in $(git diff --name-only HEAD~1); do echo "$f"; done',
    "find . -name '*.ts' -not -path './node_modules/*' -exec grep -l TODO {} +",
    'timeout 60 make -j4 build > build.log || echo "build failed: $?"',
    "if [ -f package.json ]; then node -e 'console.log(1)'; fi",
    'NODE_ENV=test npx vitest run --reporter=dot',
  ];
  let cmd = '';
  for (let i = 0; cmd.length < 1024; i++) cmd += `${cmd ? ' && ' : ''}${parts[i % parts.length]}`;
  return cmd;
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'keel-bench-perm-'));
  const ws = join(root, 'ws');
  mkdirSync(join(ws, '.keel'), { recursive: true });
  mkdirSync(join(ws, 'src'), { recursive: true });
  const allow = ['Bash(npm run test:*)', 'Bash(git status:*)', 'Bash(git diff:*)', 'Bash(make:*)', 'Bash(npx vitest:*)', 'Bash(tee:*)', 'Bash(grep:*)', 'Edit(./src/**)'];
  for (let i = 0; i < 30; i++) allow.push(`Bash(tool${i} sub:*)`);
  writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow, deny: ['Bash(rm:*)', 'Bash(curl:*)', 'Read(./secrets/**)'], ask: ['Bash(git push:*)'] } }));
  const engine = await createPermissionEngine({ workspace: ws, home: join(root, 'home') });
  const command = compoundCommand();
  const call = { tool: 'Bash', input: { command }, subject: { kind: 'execute' as const, tool: 'Bash', command, cwd: ws, summary: '' }, readOnly: false };
  for (let i = 0; i < 200; i++) await engine.decide(call, 'default');
  const samples: number[] = [];
  let last = '';
  for (let i = 0; i < 2000; i++) {
    const t0 = process.hrtime.bigint();
    const d = await engine.decide(call, 'default');
    samples.push(Number(process.hrtime.bigint() - t0) / 1e6);
    last = d.decision;
  }
  samples.sort((a, b) => a - b);
  const at = (q: number): number => Number((samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] as number).toFixed(3));
  rmSync(root, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ decision_p50_ms: at(0.5), decision_p99_ms: at(0.99), command_bytes: Buffer.byteLength(command), samples: samples.length, decision: last, node: process.version })}\n`);
}
void main();
