import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../../fixtures/fake-model-server';
import { cliBundle, ofType, runCli } from './cliHarness';

/**
 * Claude Code's skills in `keel run`: only names and descriptions reach the system prompt; the
 * body loads when the model calls the Skill tool, through the Read permission path. HOME is the
 * storage folder, so `~/.claude/skills` is the person's own folder.
 */
let server: FakeModelServer;
let workspace: string;
let storage: string;
const KEY = { ANTHROPIC_API_KEY: 'sk-test' };
const run = (...extra: string[]) =>
  runCli(['run', 'fill in the form', '--provider', 'anthropic', '--base-url', server.url, '--model', 'claude-test', '--workspace', workspace, '--output-format', 'stream-json', '--no-memory', ...extra], KEY, storage);

beforeAll(async () => {
  await cliBundle();
}, 120_000);
beforeEach(async () => {
  server = await startFakeModelServer();
  workspace = mkdtempSync(join(tmpdir(), 'keel-skill-ws-'));
  storage = mkdtempSync(join(tmpdir(), 'keel-skill-home-'));
  const dir = join(storage, '.claude', 'skills', 'pdf-forms');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), '---\nname: pdf-forms\ndescription: Fill in PDF forms with pdftk\n---\n# PDF forms\nSECRET-STEP: run pdftk with fill_form, see reference.md\n');
  writeFileSync(join(dir, 'reference.md'), 'reference');
});
afterEach(async () => {
  await server.close();
});

const system = (i: number) => JSON.stringify((server.requests[i]!.body as { system?: unknown }).system ?? '');
const messages = (i: number) => JSON.stringify((server.requests[i]!.body as { messages: unknown }).messages);
const tools = (i: number) => ((server.requests[i]!.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
const loadSkill = { blocks: [{ type: 'tool_use' as const, id: 'toolu_skill', name: 'Skill', input: { skill: 'pdf-forms' } }] };
const say = (text: string) => ({ blocks: [{ type: 'text' as const, text }] });

describe('skills in keel run', () => {
  it.each([['0'], ['1']])('lists only name and description; the body loads through the Skill tool once a Read rule allows it (workers %s)', async (workers) => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Read(~/.claude/skills/**)'] } }));
    server.enqueue(loadSkill, say('Filled.'));
    const r = await run('--workers', workers);
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(system(0)).toContain('pdf-forms: Fill in PDF forms with pdftk');
    expect(system(0)).not.toContain('SECRET-STEP');
    expect(tools(0)).toContain('Skill');
    expect(ofType(r.events, 'permission')[0]).toMatchObject({ tool: 'Skill', decision: 'allow' });
    expect(messages(1)).toContain('SECRET-STEP: run pdftk with fill_form');
    expect(messages(1)).toContain(`Base directory for this skill: ${join(storage, '.claude', 'skills', 'pdf-forms')}`);
  });

  it('without a rule, loading a skill outside the workspace asks like a Read there (headless: denied)', async () => {
    server.enqueue(loadSkill, say('Could not load it.'));
    const r = await run();
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(ofType(r.events, 'permission').map((e) => [e.tool, e.decision])).toEqual([
      ['Skill', 'ask'],
      ['Skill', 'deny'],
    ]);
    expect(messages(1)).not.toContain('SECRET-STEP');
  });

  it("a workspace's skill is not listed until approved", async () => {
    const dir = join(workspace, '.claude', 'skills', 'deploy');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'SKILL.md'), '---\nname: deploy\ndescription: Deploy to production\n---\nrun ./deploy.sh');
    server.enqueue(say('ok'));
    const r = await run();
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(system(0)).not.toContain('Deploy to production');
    // Approved with the rest of the workspace (keel trust approve): listed from then on.
    const approve = await runCli(['trust', 'approve', '--workspace', workspace], {}, storage);
    expect((await approve.exit).code, approve.stderr()).toBe(0);
    server.enqueue(say('ok'));
    const next = await run();
    expect((await next.exit).code, next.stderr()).toBe(0);
    expect(system(1)).toContain('deploy: Deploy to production');
  });

  it('a skill loads the same way when the turn runs on a worker', async () => {
    mkdirSync(join(storage, '.keel'), { recursive: true });
    writeFileSync(join(storage, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Skill'] } }));
    server.enqueue(loadSkill, say('Filled.'));
    const r = await run('--workers', '1');
    expect((await r.exit).code, r.stderr()).toBe(0);
    expect(system(0)).toContain('pdf-forms: Fill in PDF forms with pdftk');
    expect(messages(1)).toContain('SECRET-STEP');
  });
});
