// What the trust model and the watched settings cost per permission decision and per hook fire
// (issue 25 item 5: settings files watched, not stat'ed on every decision), side by side in one run:
//   settings_stamp_us_p50     the old per-decision check: stat every settings file (sync, on the
//                             host thread)
//   settings_watch_sync_us_p50  the new per-decision check's synchronous part (FileWatch.changed())
//   settings_watch_yield_us_p50 the new check's wait for queued watch events (FileWatch.settled():
//                             one setImmediate; the event loop is free meanwhile, no disk I/O)
//   watch_vs_stamp_sync_ratio settings_watch_sync_us_p50 / settings_stamp_us_p50
//   decision_us_p50           a whole decision (Bash `touch x`, an approved allow rule) through the
//                             engine with a WorkspaceTrust (median)
//   hook_item_us_p50          an approved hook's item as a fire computes it (resolve `bash
//                             scripts/fmt.sh`, digest the script and what it runs)
//   manifest_ms_p50           collecting a workspace's whole manifest (settings, 1 hook, 1 server,
//                             2 instructions files, 20 memories)
// Prints one JSON line.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPermissionEngine } from '../src/core/permissions';
import { defaultSources, stampOf } from '../src/core/permissions/settings';
import { FileWatch } from '../src/core/permissions/settingsWatch';
import { hookItem } from '../src/core/trust/items';
import { WorkspaceTrust } from '../src/core/trust/workspaceTrust';

const N = 2000;

function p50(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return Number(s[Math.floor(s.length / 2)]!.toFixed(3));
}

async function main(): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'keel-trust-bench-'));
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  for (const d of [join(ws, '.claude'), join(ws, '.keel', 'memory'), join(ws, 'scripts'), join(home, '.keel')]) mkdirSync(d, { recursive: true });
  const hook = { hooks: { PostToolUse: [{ matcher: 'Write', hooks: [{ type: 'command', command: 'bash scripts/fmt.sh' }] }] } };
  writeFileSync(join(ws, '.claude', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(touch:*)'] }, ...hook }));
  writeFileSync(join(ws, 'scripts', 'fmt.sh'), 'node scripts/fmt.js\n');
  writeFileSync(join(ws, 'scripts', 'fmt.js'), "require('./lib');\n");
  writeFileSync(join(ws, 'scripts', 'lib.js'), 'module.exports = 1;\n');
  writeFileSync(join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { srv: { command: 'node', args: ['scripts/fmt.js'] } } }));
  writeFileSync(join(ws, 'KEEL.md'), 'Rules.\n@docs.md\n');
  writeFileSync(join(ws, 'docs.md'), 'More.\n');
  for (let i = 0; i < 20; i++) writeFileSync(join(ws, '.keel', 'memory', `m${i}.md`), `---\ntitle: Memory ${i}\n---\nBody ${i}.\n`);

  const sources = defaultSources(ws, join(home, '.keel', 'settings.json'));
  const watch = new FileWatch(
    sources.map((s) => s.path),
    () => stampOf(sources),
  );
  const stamp: number[] = [];
  const sync: number[] = [];
  const yielded: number[] = [];
  for (let i = 0; i < N; i++) {
    let t = process.hrtime.bigint();
    stampOf(sources);
    stamp.push(Number(process.hrtime.bigint() - t) / 1e3);
    t = process.hrtime.bigint();
    await FileWatch.settled();
    yielded.push(Number(process.hrtime.bigint() - t) / 1e3);
    t = process.hrtime.bigint();
    watch.changed();
    sync.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  watch.dispose();

  const trust = new WorkspaceTrust({ workspace: ws, keelHome: join(home, '.keel'), home });
  await trust.approve();
  const engine = await createPermissionEngine({ workspace: ws, home, trust, protectedFiles: () => trust.protectedFilesNow() });
  const call = { tool: 'Bash', input: { command: 'touch x' }, subject: { kind: 'execute' as const, tool: 'Bash', command: 'touch x', cwd: ws, summary: 'touch x' }, readOnly: false };
  const decisions: number[] = [];
  for (let i = 0; i < 300; i++) {
    const t = process.hrtime.bigint();
    const d = await engine.decide(call, 'default');
    decisions.push(Number(process.hrtime.bigint() - t) / 1e3);
    if (d.decision !== 'allow') throw new Error(`expected allow, got ${d.decision}: ${d.reason}`);
  }
  engine.dispose?.();

  const h = { event: 'PostToolUse', matcher: 'Write', command: 'bash scripts/fmt.sh', fingerprint: 'x', source: join(ws, '.claude', 'settings.json') };
  const items: number[] = [];
  for (let i = 0; i < 500; i++) {
    const t = process.hrtime.bigint();
    hookItem(h, '.claude/settings.json', { workspace: ws, home });
    items.push(Number(process.hrtime.bigint() - t) / 1e3);
  }
  const manifests: number[] = [];
  for (let i = 0; i < 50; i++) {
    const t = process.hrtime.bigint();
    trust.manifest();
    manifests.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  trust.dispose();
  rmSync(root, { recursive: true, force: true });

  const result = {
    settings_stamp_us_p50: p50(stamp),
    settings_watch_sync_us_p50: p50(sync),
    settings_watch_yield_us_p50: p50(yielded),
    watch_vs_stamp_sync_ratio: Number((p50(sync) / p50(stamp)).toFixed(4)),
    decision_us_p50: p50(decisions),
    hook_item_us_p50: p50(items),
    manifest_ms_p50: p50(manifests),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
}

void main();
