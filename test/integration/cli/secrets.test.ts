import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, filesUnder, ofType, pieces, runCli } from './cliHarness';

/**
 * `keel run` with provider keys in its environment, against the fake model server: a scripted
 * (hostile) model asks the Bash tool for the environment every way it can, reads a file holding a
 * key and greps for one. Neither what the model receives, nor the live output, nor the task log on
 * disk (its log and its checkpoints) holds a key; a variable the person passes through reaches the command.
 */
const ANTHROPIC_KEY = `sk-ant-api03-${'Qw7_'.repeat(23)}zAA`;
const OPENAI_KEY = `sk-proj-${'Lm4-'.repeat(18)}abT3BlbkFJ${'Rt5_'.repeat(18)}cd`;
const SHAPED = `sk-ant-api03-${'a1B2'.repeat(23)}xAA`;
const FILE_KEY = `ghp_${'Zy8x'.repeat(9)}`;

let server: FakeModelServer;
let workspace: string;
let home: string;

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-secrets-ws-'));
  home = mkdtempSync(join(tmpdir(), 'keel-secrets-home-'));
});
afterEach(async () => {
  await server.close();
});

type Block = { type: string; tool_use_id?: string; content?: unknown };
function toolResults(body: unknown): Map<string, string> {
  const out = new Map<string, string>();
  const messages = (body as { messages: { role: string; content: string | Block[] }[] }).messages;
  for (const m of messages) {
    if (typeof m.content === 'string') continue;
    for (const b of m.content) if (b.type === 'tool_result') out.set(b.tool_use_id!, typeof b.content === 'string' ? b.content : JSON.stringify(b.content));
  }
  return out;
}

const bash = (id: string, command: string) => ({ blocks: [{ type: 'tool_use' as const, id, name: 'Bash', input: { command } }] });

describe('keel run keeps keys out of tool processes, tool results and the task log', () => {
  it('printenv, env, /proc/self/environ, a key file and a key-shaped string', async () => {
    mkdirSync(join(workspace, '.keel'));
    // A repository cannot ask for the keys: passEnv in the project's settings is not read.
    writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ passEnv: ['ANTHROPIC_API_KEY', 'OPENAI_API_KEY'] }));
    // The person can: --pass-env, and passEnv in their own ~/.keel/settings.json.
    mkdirSync(join(home, '.keel'));
    writeFileSync(join(home, '.keel', 'settings.json'), JSON.stringify({ passEnv: ['GIT_PAGER'] }));
    writeFileSync(join(workspace, 'deploy.env'), `GITHUB_TOKEN=${FILE_KEY}\nREGION=eu-west-1\n`);
    server.enqueue(
      bash('toolu_printenv', 'printenv'),
      bash('toolu_env', 'env'),
      bash('toolu_one', 'printenv ANTHROPIC_API_KEY; echo "exit=$?"'),
      bash('toolu_proc', "cat /proc/self/environ | tr '\\0' '\\n'"),
      bash('toolu_pass', 'printenv OPENAI_API_KEY | sha256sum; printenv GIT_PAGER'),
      bash('toolu_shaped', `printf 'found: sk-ant-api03-%s%sAA\\n' "$(printf 'a1B2%.0s' {1..23})" x`),
      { blocks: [{ type: 'tool_use', id: 'toolu_read', name: 'Read', input: { file_path: 'deploy.env' } }] },
      { blocks: [{ type: 'tool_use', id: 'toolu_grep', name: 'Grep', input: { pattern: 'ghp_', output_mode: 'content' } }] },
      { blocks: [{ type: 'text', text: 'Looked around.' }] },
    );
    const run = await runCli(
      ['run', 'look around', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--mode', 'bypassPermissions', '--pass-env', 'OPENAI_API_KEY'],
      { ANTHROPIC_API_KEY: ANTHROPIC_KEY, OPENAI_API_KEY: OPENAI_KEY, GIT_PAGER: 'cat', HOME: home },
    );
    const { code } = await run.exit;
    expect(code, run.stderr()).toBe(0);
    expect(ofType(run.events, 'tool_result').map((e) => e.id)).toEqual(['toolu_printenv', 'toolu_env', 'toolu_one', 'toolu_proc', 'toolu_pass', 'toolu_shaped', 'toolu_read', 'toolu_grep']);

    // The last request of the run (the gatekeeper's lesson call after it carries no tool results).
    const seen = toolResults([...server.requests].reverse().find((r) => toolResults(r.body).size > 0)!.body);
    // The commands ran and printed the environment — without the keys.
    for (const id of ['toolu_printenv', 'toolu_env', 'toolu_proc']) expect(seen.get(id), id).toMatch(/PATH=/);
    expect(seen.get('toolu_one')).toBe('exit=1');
    // Passed through by the person: the command got the OpenAI key (its hash proves it) and GIT_PAGER.
    expect(seen.get('toolu_pass')).toContain(createHash('sha256').update(`${OPENAI_KEY}\n`).digest('hex'));
    expect(seen.get('toolu_pass')).toContain('cat');
    // Key shapes in output are redacted before the model sees them.
    expect(seen.get('toolu_shaped')).toMatch(/^found: \[REDACTED:[a-z-]+\]$/);
    expect(seen.get('toolu_read')).toContain('REGION=eu-west-1');
    expect(seen.get('toolu_read')).toContain('GITHUB_TOKEN=[REDACTED:');
    expect(seen.get('toolu_grep')).toContain('[REDACTED:');

    const everythingTheModelGot = server.requests.map((r) => JSON.stringify([...toolResults(r.body).values()])).join('\n');
    const liveAndEvents = run.stdout();
    // Everything the task stored — its log and its checkpoints (docs/persistence.md: a file that
    // holds a key or token, deploy.env here, is not kept, and is named not restorable) — holds no
    // key; the checkpoints are private like the rest of the store.
    const stored = filesUnder(run.storage);
    const checkpointFiles = stored.filter((f) => f.includes('/checkpoints/'));
    expect(checkpointFiles.length, 'the commands were checkpointed').toBeGreaterThan(0);
    for (const f of checkpointFiles) expect((statSync(f).mode & 0o077).toString(8), f).toBe('0');
    const taskLog = stored.map((f) => readFileSync(f, 'latin1')).join('\n');
    for (const [what, text] of [['model', everythingTheModelGot], ['stream-json output', liveAndEvents], ['task log', taskLog]] as const) {
      for (const secret of [ANTHROPIC_KEY, OPENAI_KEY, SHAPED, FILE_KEY]) expect(pieces(text, secret), `${what} holds a piece of a key`).toEqual([]);
    }
    // The live output went through the redactor too (and was there to check).
    expect(ofType(run.events, 'tool_output').map((e) => e.chunk).join('')).toContain('found: [REDACTED:');
  });
});
