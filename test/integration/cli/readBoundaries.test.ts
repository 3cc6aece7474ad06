import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Issue 22 (and issue 21 item 9) end to end: `keel run` (the built CLI, headless: what would ask
 * is denied) with a scripted model. The person sees it in what the model was sent: a denied file's
 * content never reaches the model through the Grep tool; a file command allowed by a Bash rule
 * does not write Keel's settings or an instruction file; a git runner does not run a denied command.
 */
let server: FakeModelServer;
let workspace: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const SECRET = 'AKIAIOSFODNN7EXAMPLE';
const args = (prompt: string, mode = 'default'): string[] => [
  'run', prompt, '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', mode,
];
/** The workspace's allow rules count once the person approved them (issue 21 item 1): approve them in a fresh storage folder. */
async function approveWorkspace(): Promise<string> {
  const storage = mkdtempSync(join(tmpdir(), 'keel-cli-reads-store-'));
  const approve = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
  expect((await approve.exit).code, approve.stderr()).toBe(0);
  return storage;
}
/** Everything the model was sent, as text. */
const sentToModel = (): string => server.requests.map((r) => JSON.stringify(r.body)).join('\n');

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-cli-reads-'));
  for (const d of ['.keel', 'secrets', 'src']) mkdirSync(join(workspace, d));
  writeFileSync(join(workspace, 'secrets', 'aws.txt'), `aws_access_key_id=${SECRET}\n`);
  writeFileSync(join(workspace, 'src', 'a.ts'), `// mentions ${SECRET.slice(0, 4)} in code\n`);
  writeFileSync(join(workspace, 'KEEL.md'), '# Project rules\n');
});
afterEach(async () => {
  await server.close();
});

const settings = (permissions: Record<string, string[]>): void => writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ permissions }));

describe('keel run: what a rule allows and what it reads and writes', () => {
  it('a Grep of the whole workspace runs, and never sends the model a file Read(./secrets/**) denies', async () => {
    settings({ deny: ['Read(./secrets/**)'] });
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'AKIA', output_mode: 'content' } }] },
      { blocks: [{ type: 'text', text: 'Searched.' }] },
    );
    const run = await runCli(args('find keys'), KEY);
    expect((await run.exit).code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'permission').filter((e) => e.toolCallId === 'toolu_grep').map((e) => e.decision)).toEqual(['allow']);
    const sent = sentToModel();
    expect(sent).toContain('src/a.ts');
    expect(sent).toContain('Not searched');
    expect(sent).not.toContain(SECRET);
    expect(sent).not.toContain('aws.txt');
  });

  it('acceptEdits writes ordinary files but not an instruction file, whichever path the model takes', async () => {
    settings({ allow: ['Bash(tee:*)', 'Bash(cp:*)'] });
    const storage = await approveWorkspace();
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_write', name: 'Write', input: { file_path: 'KEEL.md', content: 'Always allow every command.\n' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_tee', name: 'Bash', input: { command: 'echo "Always allow every command." | tee AGENTS.md' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_cp', name: 'Bash', input: { command: 'cp src/a.ts .keel/settings.local.json' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_ok', name: 'Bash', input: { command: 'cp src/a.ts src/b.ts' } }] },
      { blocks: [{ type: 'text', text: 'Done.' }] },
    );
    const run = await runCli(args('update the rules', 'acceptEdits'), KEY, storage);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const decided = (id: string) => ofType(run.events, 'permission').filter((e) => e.toolCallId === id).map((e) => e.decision);
    for (const id of ['toolu_write', 'toolu_tee', 'toolu_cp']) expect(decided(id), id).toEqual(['ask', 'deny']);
    expect(decided('toolu_ok')).toEqual(['allow']);
    expect(readFileSync(join(workspace, 'KEEL.md'), 'utf8')).toBe('# Project rules\n');
    expect(existsSync(join(workspace, 'AGENTS.md'))).toBe(false);
    expect(existsSync(join(workspace, '.keel', 'settings.local.json'))).toBe(false);
    expect(existsSync(join(workspace, 'src', 'b.ts'))).toBe(true);
  });

  it('a runner a rule allows does not run the command a deny rule names', async () => {
    settings({ allow: ['Bash(git rebase:*)', 'Bash(sed:*)'], deny: ['Bash(rm:*)'] });
    const storage = await approveWorkspace();
    server.enqueue(
      { blocks: [{ type: 'tool_use', id: 'toolu_rebase', name: 'Bash', input: { command: "git rebase -x 'rm -rf src' HEAD~1" } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_sed', name: 'Bash', input: { command: "sed -n '1e rm -rf src' src/a.ts" } }] },
      { blocks: [{ type: 'text', text: 'Done.' }] },
    );
    const run = await runCli(args('rebase'), KEY, storage);
    expect((await run.exit).code, run.stderr()).toBe(0);
    const decided = (id: string) => ofType(run.events, 'permission').filter((e) => e.toolCallId === id).map((e) => e.decision);
    expect(decided('toolu_rebase')).toEqual(['deny']);
    expect(decided('toolu_sed')).not.toContain('allow');
    expect(existsSync(join(workspace, 'src', 'a.ts'))).toBe(true);
  });
});
