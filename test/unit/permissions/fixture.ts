import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPermissionEngine, type EngineDecision, type PermissionEngine } from '../../../src/core/permissions';
import type { PermissionMode } from '../../../src/core/runtime/types';
import { parseToolInput } from '../../../src/core/tools/execute';
import { createToolRegistry } from '../../../src/core/tools/registry';
import { TRUST_EVERYTHING } from '../helpers/trustAll';
import type { TrustView } from '../../../src/core/trust/items';

/**
 * A real workspace on disk for permission tests: files, a symlink out of it, a home folder and
 * settings files. `decide` builds the subject with the real tool, as the runtime does.
 */
export interface PermissionFixture {
  root: string;
  ws: string;
  home: string;
  outside: string;
  engine: PermissionEngine;
  decide(tool: string, input: Record<string, unknown>, mode?: PermissionMode): Promise<EngineDecision>;
  bash(command: string, mode?: PermissionMode): Promise<EngineDecision>;
  cleanup(): void;
}

export const CORPUS_SETTINGS = {
  permissions: {
    allow: [
      'Bash(npm test)', 'Bash(npm run test:*)', 'Bash(npm install)', 'Bash(git status)', 'Bash(git diff:*)', 'Bash(git log:*)', 'Bash(echo:*)',
      'Bash(ls:*)', 'Bash(cargo build:*)', 'Bash(git * main)', 'Bash(python3 script.py)', 'Bash(make:*)', 'Bash(grep:*)', 'Bash(node build.js)',
      'Read(~/docs/**)', 'Edit(./src/**)', 'WebFetch(domain:example.com)', 'WebFetch(domain:*.github.io)', 'mcp__fs', 'mcp__git__status',
    ],
    deny: ['Bash(rm:*)', 'Bash(curl:*)', 'Read(./secrets/**)', 'Edit(./.env)', 'WebFetch(domain:evil.com)'],
    ask: ['Bash(git push:*)'],
  },
};

/**
 * `extra.trust`: the person's approvals of the fixture's workspace; by default everything in its
 * settings file counts as approved (what these tests are about is what the rules do).
 * `extra.protectedFiles`: files (relative to the workspace) the caller protects.
 */
export async function makeFixture(settings: unknown = CORPUS_SETTINGS, extra: { settingsText?: string; trust?: TrustView; protectedFiles?: string[] } = {}): Promise<PermissionFixture> {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'keel-perm-')));
  const ws = join(root, 'ws');
  const home = join(root, 'home');
  const outside = join(root, 'outside');
  for (const d of [ws, home, outside, join(ws, 'src'), join(ws, 'secrets'), join(ws, '.git'), join(ws, '.keel'), join(home, 'docs')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(ws, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(ws, 'secrets', 'key.pem'), 'KEY');
  writeFileSync(join(ws, 'package.json'), '{}');
  writeFileSync(join(outside, 'secret.txt'), 'outside');
  writeFileSync(join(home, 'docs', 'notes.md'), 'notes');
  writeFileSync(join(home, 'other.txt'), 'other');
  symlinkSync(outside, join(ws, 'link-out'));
  symlinkSync(join(ws, 'secrets', 'key.pem'), join(ws, 'link-secret'));
  writeFileSync(join(ws, '.keel', 'settings.json'), extra.settingsText ?? JSON.stringify(settings));
  const protectedFiles = new Map((extra.protectedFiles ?? []).map((p) => [join(ws, p), `writes a protected file (${p})`]));
  const engine = await createPermissionEngine({ workspace: ws, home, trust: extra.trust ?? TRUST_EVERYTHING, ...(protectedFiles.size > 0 ? { protectedFiles: () => protectedFiles } : {}) });
  const registry = createToolRegistry();
  const decide = async (tool: string, input: Record<string, unknown>, mode: PermissionMode = 'default'): Promise<EngineDecision> => {
    if (tool.startsWith('mcp__')) {
      const server = /^mcp__(.+?)__/.exec(tool)?.[1] ?? '';
      return engine.decide({ tool, input, subject: { kind: 'mcp', tool, server, summary: tool }, readOnly: false }, mode);
    }
    const parsed = parseToolInput(registry, tool, input);
    if (!parsed.ok) throw new Error(`bad test input for ${tool}: ${parsed.result.content}`);
    const subject = parsed.tool.subject(parsed.input as never, { workspace: ws });
    return engine.decide({ tool, input: parsed.input, subject, readOnly: parsed.tool.readOnly }, mode);
  };
  return {
    root,
    ws,
    home,
    outside,
    engine,
    decide,
    bash: (command, mode) => decide('Bash', { command }, mode),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}
