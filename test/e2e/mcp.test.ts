/**
 * MCP in a real VS Code (code-server) with the packaged .vsix, the fake model server and the real
 * server-everything (a devDependency): the workspace's .mcp.json names it; the first task brings
 * the workspace's review (docs/permissions.md, "Trust") naming the server's exact command; after
 * Approve all the model is offered
 * mcp__everything__get-sum, its scripted call asks on the permission card, and the result shows
 * in the tool card; Settings → MCP servers shows the server ready with its tools.
 * Screenshots go to test-results/mcp-*.png.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Frame } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, REPO_ROOT, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const EVERYTHING = join(REPO_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

describe('MCP in VS Code', () => {
  it('approval modal, a tool call shown in its card, the MCP section ready with its tools', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({
        turns: [
          { blocks: [{ type: 'tool_use', id: 'toolu_sum', name: 'mcp__everything__get-sum', input: { a: 2, b: 40 } }] },
          { blocks: [{ type: 'text', text: 'The answer is 42.' }] },
        ],
      });
      const keelHome = mkdtempSync(join(tmpdir(), 'keel-e2e-home-'));
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        settings: { 'keel.provider': 'anthropic', 'keel.anthropic.baseUrl': server.url, 'keel.model': 'claude-sonnet-5-5', 'keel.permissions.defaultMode': 'default' },
        env: { ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: keelHome },
      });
      // The hub reads .mcp.json when first used (the first task), so it may be written now.
      writeFileSync(join(vs.workspace, '.mcp.json'), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } } }));
      const page = vs.page;
      await vs.runCommand('Keel: Focus on Chat View');
      const chat: Frame = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      const input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('What is 2 + 40?');
      await input.press('Enter');

      // The workspace's review lists the server with its exact command.
      const dialog = page.locator('.monaco-dialog-box');
      await dialog.waitFor({ timeout: 60_000 });
      const said = (await dialog.textContent()) ?? '';
      expect(said).toContain('Approve what this workspace provides?');
      expect(said).toContain('asked now because the MCP server everything would start');
      expect(said).toContain('MCP server everything:');
      expect(said).toContain(`starts: ${process.execPath} ${EVERYTHING} stdio`);
      await vs.screenshot('mcp-1-approval');
      await dialog.locator('.monaco-button', { hasText: /^Approve all$/ }).click();

      // The model is offered the server's tools; its call asks (no rule allows it) and then runs.
      const card = chat.locator('[data-testid="permission-card"][data-tool="mcp__everything__get-sum"]');
      await card.waitFor({ timeout: 60_000 });
      await card.locator('[data-testid="permission-allow"]').click();
      const tool = chat.locator('[data-testid="tool-card"][data-tool="mcp__everything__get-sum"]');
      await expect.poll(async () => (await tool.textContent()) ?? '', { timeout: 60_000 }).toContain('The sum of 2 and 40 is 42');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'The answer is 42.' }).waitFor({ timeout: 60_000 });
      const first = JSON.stringify(server.requests.filter((r) => r.path === '/v1/messages')[0]?.body ?? {});
      expect(first).toContain('mcp__everything__get-sum');
      await vs.screenshot('mcp-2-tool-card');

      // Settings → MCP servers: ready, with its tools.
      await chat.locator('[data-testid="nav-settings"]').click();
      const row = chat.locator('[data-testid="mcp-server"][data-server="everything"]');
      await row.waitFor({ timeout: 30_000 });
      await expect.poll(async () => row.getAttribute('data-phase'), { timeout: 30_000 }).toBe('ready');
      expect(await row.getAttribute('data-approval')).toBe('approved');
      expect(await row.locator('[data-testid="mcp-summary"]').textContent()).toMatch(/\d+ tools/);
      expect(await row.locator('[data-testid="mcp-tool"]', { hasText: 'mcp__everything__get-sum' }).count()).toBe(1);
      await vs.screenshot('mcp-3-settings');
      expect(vs.readKeelLog()).toMatch(/MCP: 1 server\(s\) configured/);
    } catch (e) {
      await vs?.screenshot('mcp-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  });
});
