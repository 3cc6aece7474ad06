/**
 * The trust model in a real VS Code (code-server, the packaged .vsix, the fake model server;
 * docs/permissions.md, "Trust"): a folder opened in Restricted Mode gets nothing it provides — its
 * KEEL.md is not in the model's prompt; once the person trusts the folder, Keel's own review
 * lists what it provides, and after Approve all the next task's prompt has it.
 * Screenshots go to test-results/trust-*.png.
 */
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeModelServer, type FakeModelServer } from '../fixtures/fake-model-server/index';
import { ensureKeelVsix, startVsCode, type VsCodeSession } from './harness';

const READY = 'body[data-keel-ready="true"]';
const systemOf = (server: FakeModelServer, i: number) => JSON.stringify((server.requests.filter((r) => r.path === '/v1/messages')[i]?.body as { system?: unknown } | undefined)?.system ?? '');

describe('Workspace Trust and the workspace review in VS Code', () => {
  it('Restricted Mode uses nothing the folder provides; trusting it offers the review; Approve all brings KEEL.md into the prompt', async () => {
    let server: FakeModelServer | undefined;
    let vs: VsCodeSession | undefined;
    try {
      server = await startFakeModelServer({ turns: [{ blocks: [{ type: 'text', text: 'Hello.' }] }, { blocks: [{ type: 'text', text: 'Hello again.' }] }] });
      const workspace = join(mkdtempSync(join(tmpdir(), 'keel-e2e-trust-')), 'repo');
      mkdirSync(join(workspace, '.keel'), { recursive: true });
      writeFileSync(join(workspace, 'KEEL.md'), 'Answer like a pirate. RULE-E2E-7\n');
      writeFileSync(join(workspace, '.keel', 'settings.json'), JSON.stringify({ permissions: { allow: ['Bash(touch:*)'] } }));
      vs = await startVsCode({
        vsixPath: ensureKeelVsix(),
        workspace,
        workspaceTrust: true,
        settings: {
          // Workspace Trust on, without the startup modal: the folder opens in Restricted Mode.
          'security.workspace.trust.enabled': true,
          'security.workspace.trust.startupPrompt': 'never',
          'keel.provider': 'anthropic',
          'keel.anthropic.baseUrl': server.url,
          'keel.model': 'claude-sonnet-5-5',
          'keel.permissions.defaultMode': 'default',
        },
        env: { ANTHROPIC_API_KEY: 'test-key', KEEL_HOME: mkdtempSync(join(tmpdir(), 'keel-e2e-home-')) },
      });
      const page = vs.page;
      await vs.runCommand('Keel: Focus on Chat View');
      let chat = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      let input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('hi');
      await input.press('Enter');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Hello.' }).waitFor({ timeout: 90_000 });
      expect(systemOf(server, 0)).not.toContain('RULE-E2E-7');
      await expect.poll(() => vs!.readKeelLog(), { timeout: 30_000 }).toContain('held back until you approve this workspace: instructions KEEL.md');
      expect(vs.readKeelLog()).toContain("workspace trust: VS Code's Restricted Mode");
      await vs.screenshot('trust-1-restricted');

      // The person trusts the folder: Keel offers its review of what the folder provides.
      await vs.runCommand('Workspaces: Manage Workspace Trust');
      const trustButton = page.locator('.workspace-trust-editor .monaco-button', { hasText: /^Trust$/ }).first();
      await trustButton.waitFor({ timeout: 60_000 });
      await trustButton.click();
      const dialog = page.locator('.monaco-dialog-box', { hasText: 'Approve what this workspace provides?' });
      await dialog.waitFor({ timeout: 60_000 });
      const said = (await dialog.textContent()) ?? '';
      expect(said).toContain('asked now because you trusted this folder');
      expect(said).toContain('instructions KEEL.md');
      expect(said).toContain('allow rule Bash(touch:*)');
      await vs.screenshot('trust-2-review');
      await dialog.locator('.monaco-button', { hasText: /^Approve all$/ }).click();
      await expect.poll(() => vs!.readKeelLog(), { timeout: 30_000 }).toMatch(/approved 2 item\(s\) of this workspace/);

      // The next task's prompt has the approved KEEL.md.
      await vs.runCommand('Keel: Focus on Chat View');
      await vs.runCommand('Keel: New Task');
      chat = await vs.webviewFrame(READY, { timeoutMs: 60_000 });
      input = chat.locator('[data-testid="prompt-input"]');
      await input.fill('hi again');
      await input.press('Enter');
      await chat.locator('[data-testid="message-assistant"]', { hasText: 'Hello again.' }).waitFor({ timeout: 90_000 });
      expect(systemOf(server, 1)).toContain('RULE-E2E-7');
      await vs.screenshot('trust-3-approved');
    } catch (e) {
      await vs?.screenshot('trust-failure').catch(() => undefined);
      throw new Error(`${e instanceof Error ? e.stack : String(e)}\n--- Keel log ---\n${vs?.readKeelLog().slice(-4000) ?? ''}`);
    } finally {
      await vs?.close();
      await server?.close();
    }
  }, 600_000);
});
