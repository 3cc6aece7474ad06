import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync, copyFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { McpHub } from '../../../src/core/mcp/hub';
import { approvalsFile } from '../../../src/core/trust/store';
import { WorkspaceTrust } from '../../../src/core/trust/workspaceTrust';
import { FAULTY, tempDir } from './helpers';

/**
 * A server from a cloned repository's .mcp.json never starts before the person approved the
 * workspace (docs/permissions.md, "Trust"); the approval lives in Keel's home, covers the exact
 * command and the content of the file it runs, and is revocable. "Started" is checked on a real
 * process: the fixture server logs each start to a file.
 */
function repoWithServer(ws: string, log: string, extraArg = '', script = FAULTY): void {
  const args = [script, '--log', log, ...(extraArg ? [extraArg] : [])];
  writeFileSync(join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { repo: { command: process.execPath, args } } }));
}
const started = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"started"')).length : 0);

describe('project server approval', () => {
  it('a pending project server is listed but never started, and nothing the repository writes approves it', async () => {
    const ws = tempDir();
    const home = tempDir();
    const log = join(tempDir(), 'log.jsonl');
    repoWithServer(ws, log);
    // A repository cannot approve itself: neither approval files of its own nor Claude Code's
    // enableAllProjectMcpServers in its settings count.
    mkdirSync(join(ws, '.keel', 'trust'), { recursive: true });
    writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true, enabledMcpjsonServers: ['repo'] }));
    writeFileSync(join(ws, '.keel', 'mcp-approvals.json'), JSON.stringify({ version: 1, workspaces: { [ws]: { repo: { decision: 'approved', fingerprint: 'x', target: 'x', at: 'x' } } } }));
    writeFileSync(join(ws, '.keel', 'trust', 'approvals.json'), JSON.stringify({ version: 1, workspaces: { [ws]: { stamp: 'x', marker: null, approvedAt: 'x', items: { 'mcp:repo': { kind: 'mcp', fingerprint: 'x', summary: 'x', at: 'x' } } } } }));
    const trust = new WorkspaceTrust({ workspace: ws, keelHome: home });
    const hub = new McpHub({ workspace: ws, keelHome: home, trust });
    try {
      expect(await hub.toolDefinitions()).toEqual([]);
      expect(hub.status()[0]).toMatchObject({ name: 'repo', scope: 'project', approval: 'pending', phase: 'disconnected' });
      hub.restart('repo');
      await hub.start();
      expect(started(log)).toBe(0);
    } finally {
      await hub.dispose();
      trust.dispose();
    }
  });

  it('asks the reviewer once for all servers, remembers the approval outside the repository, and revokes', async () => {
    const ws = tempDir();
    const home = tempDir();
    const log = join(tempDir(), 'log.jsonl');
    repoWithServer(ws, log);
    const reasons: string[] = [];
    const trust = new WorkspaceTrust({ workspace: ws, keelHome: home });
    const reviewer = (approve: boolean) => ({
      review: async (reason: string) => {
        reasons.push(reason);
        if (approve) await trust.approve();
      },
    });

    const first = new McpHub({ workspace: ws, keelHome: home, trust, reviewer: reviewer(true) });
    await Promise.all([first.toolDefinitions(), first.toolDefinitions()]);
    expect((await first.toolDefinitions()).map((d) => d.name)).toContain('mcp__repo__echo');
    await first.dispose();
    expect(reasons).toEqual(['the MCP server repo would start']);
    expect(started(log)).toBe(1);
    expect(statSync(approvalsFile(home)).mode & 0o777).toBe(0o600);
    expect(readFileSync(approvalsFile(home), 'utf8')).toContain(`${FAULTY} --log ${log}`);

    // Remembered: a new hub (a new window) starts it without asking.
    const second = new McpHub({ workspace: ws, keelHome: home, trust, reviewer: reviewer(false) });
    expect((await second.toolDefinitions()).length).toBeGreaterThan(0);
    expect(reasons).toHaveLength(1);
    // Revoked: it stops, and the next start asks again.
    expect(await second.revoke('repo')).toBe(true);
    expect(second.status()[0]!.approval).toBe('pending');
    await second.dispose();
    const third = new McpHub({ workspace: ws, keelHome: home, trust, reviewer: reviewer(false) });
    expect(await third.toolDefinitions()).toEqual([]);
    await third.dispose();
    expect(reasons).toHaveLength(2);
    expect(started(log)).toBe(2);
    trust.dispose();
  });

  it('a changed .mcp.json entry or a changed server script needs a new approval; the same checkout through a symlink shares it', async () => {
    const ws = tempDir();
    const home = tempDir();
    const log = join(tempDir(), 'log.jsonl');
    const script = join(ws, 'server.mjs');
    copyFileSync(FAULTY, script);
    repoWithServer(ws, log, '', script);
    const trust = new WorkspaceTrust({ workspace: ws, keelHome: home });
    await trust.approve();
    const state = async (workspace: string, t: WorkspaceTrust) => {
      const hub = new McpHub({ workspace, keelHome: home, trust: t });
      const s = hub.status()[0]!.approval;
      await hub.dispose();
      return s;
    };
    expect(await state(ws, trust)).toBe('approved');
    const link = join(tempDir(), 'link');
    symlinkSync(ws, link);
    const viaLink = new WorkspaceTrust({ workspace: link, keelHome: home });
    expect(await state(link, viaLink)).toBe('approved');
    viaLink.dispose();
    // The script it runs changes: pending again, and a restart does not start it.
    writeFileSync(script, `${readFileSync(script, 'utf8')}\n// changed\n`);
    expect(await state(ws, trust)).toBe('pending');
    await trust.approve();
    expect(await state(ws, trust)).toBe('approved');
    repoWithServer(ws, log, '--mode', script);
    expect(await state(ws, trust)).toBe('pending');
    // Another workspace with the same file is another decision.
    const other = tempDir();
    repoWithServer(other, log);
    const otherTrust = new WorkspaceTrust({ workspace: other, keelHome: home });
    expect(await state(other, otherTrust)).toBe('pending');
    otherTrust.dispose();
    trust.dispose();
  });

  it('user servers need no approval', async () => {
    const ws = tempDir();
    const home = tempDir();
    writeFileSync(join(home, 'mcp.json'), JSON.stringify({ mcpServers: { mine: { command: process.execPath, args: [FAULTY] } } }));
    const hub = new McpHub({ workspace: ws, keelHome: home });
    try {
      expect((await hub.toolDefinitions()).map((d) => d.name)).toContain('mcp__mine__echo');
      expect(hub.status()[0]!.approval).toBe('not-needed');
    } finally {
      await hub.dispose();
    }
  });
});
