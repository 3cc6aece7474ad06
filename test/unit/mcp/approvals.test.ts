import { existsSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { approvalsPath, McpApprovals } from '../../../src/core/mcp/approvals';
import { loadMcpConfig } from '../../../src/core/mcp/config';
import { McpHub, type McpApprovalRequest } from '../../../src/core/mcp/hub';
import { FAULTY, tempDir } from './helpers';

/**
 * A server from a cloned repository's .mcp.json never starts before the person approved it in
 * this workspace; the approval lives in Keel's home, names the exact command, and is revocable.
 * "Started" is checked on a real process: the fixture server logs each start to a file.
 */
function repoWithServer(ws: string, log: string, extraArg = ''): void {
  const args = [FAULTY, '--log', log, ...(extraArg ? [extraArg] : [])];
  writeFileSync(join(ws, '.mcp.json'), JSON.stringify({ mcpServers: { repo: { command: process.execPath, args } } }));
}
const started = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter((l) => l.includes('"started"')).length : 0);

describe('project server approval', () => {
  it('a pending project server is listed but never started, and a call says so', async () => {
    const ws = tempDir();
    const log = join(tempDir(), 'log.jsonl');
    repoWithServer(ws, log);
    // A repository cannot approve itself: neither an approvals file of its own nor Claude Code's
    // enableAllProjectMcpServers in its settings counts.
    mkdirSync(join(ws, '.keel'));
    writeFileSync(join(ws, '.keel', 'settings.json'), JSON.stringify({ enableAllProjectMcpServers: true, enabledMcpjsonServers: ['repo'] }));
    writeFileSync(join(ws, '.keel', 'mcp-approvals.json'), JSON.stringify({ version: 1, workspaces: { [ws]: { repo: { decision: 'approved', fingerprint: 'x', target: 'x', at: 'x' } } } }));
    const hub = new McpHub({ workspace: ws, keelHome: tempDir() });
    try {
      expect(await hub.toolDefinitions()).toEqual([]);
      expect(hub.status()[0]).toMatchObject({ name: 'repo', scope: 'project', approval: 'pending', phase: 'disconnected' });
      hub.restart('repo');
      await hub.start();
      expect(started(log)).toBe(0);
    } finally {
      await hub.dispose();
    }
  });

  it('asks once with the exact command, remembers the answer outside the repository, and revokes', async () => {
    const ws = tempDir();
    const home = tempDir();
    const log = join(tempDir(), 'log.jsonl');
    repoWithServer(ws, log);
    const asked: McpApprovalRequest[] = [];
    const approver = (answer: 'approve' | 'reject' | 'later') => ({ approve: async (r: McpApprovalRequest) => (asked.push(r), answer) });

    const first = new McpHub({ workspace: ws, keelHome: home, approver: approver('approve') });
    expect((await first.toolDefinitions()).map((d) => d.name)).toContain('mcp__repo__echo');
    await first.dispose();
    expect(asked).toEqual([{ server: 'repo', transport: 'stdio', target: `${process.execPath} ${FAULTY} --log ${log}`, source: join(ws, '.mcp.json') }]);
    expect(started(log)).toBe(1);
    expect(existsSync(approvalsPath(home))).toBe(true);
    expect(statSync(approvalsPath(home)).mode & 0o777).toBe(0o600);

    // Remembered: a new hub (a new window) starts it without asking.
    const second = new McpHub({ workspace: ws, keelHome: home, approver: approver('reject') });
    expect((await second.toolDefinitions()).length).toBeGreaterThan(0);
    await second.dispose();
    expect(asked).toHaveLength(1);

    // Revoked: asked again; a rejection is remembered too and nothing starts.
    expect(new McpApprovals(home, ws).revoke('repo')).toBe(true);
    const third = new McpHub({ workspace: ws, keelHome: home, approver: approver('reject') });
    expect(await third.toolDefinitions()).toEqual([]);
    expect(third.status()[0]!.approval).toBe('rejected');
    await third.dispose();
    const fourth = new McpHub({ workspace: ws, keelHome: home, approver: approver('approve') });
    expect(await fourth.toolDefinitions()).toEqual([]);
    await fourth.dispose();
    expect(asked).toHaveLength(2);
    expect(started(log)).toBe(2);
  });

  it('a changed .mcp.json entry needs a new approval; the same checkout through a symlink shares it', () => {
    const ws = tempDir();
    const home = tempDir();
    repoWithServer(ws, '/tmp/x.jsonl');
    const approvals = new McpApprovals(home, ws);
    const [server] = loadMcpConfig({ workspace: ws, keelHome: home, env: {} }).servers;
    approvals.decide(server!, 'approved', 'target');
    expect(approvals.stateOf(server!)).toBe('approved');
    const link = join(tempDir(), 'link');
    symlinkSync(ws, link);
    const [viaLink] = loadMcpConfig({ workspace: link, keelHome: home, env: {} }).servers;
    expect(new McpApprovals(home, link).stateOf(viaLink!)).toBe('approved');
    repoWithServer(ws, '/tmp/x.jsonl', '--mode');
    const [changed] = loadMcpConfig({ workspace: ws, keelHome: home, env: {} }).servers;
    expect(approvals.stateOf(changed!)).toBe('pending');
    // Another workspace with the same file is another decision.
    const other = tempDir();
    repoWithServer(other, '/tmp/x.jsonl');
    const [otherServer] = loadMcpConfig({ workspace: other, keelHome: home, env: {} }).servers;
    expect(new McpApprovals(home, other).stateOf(otherServer!)).toBe('pending');
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
