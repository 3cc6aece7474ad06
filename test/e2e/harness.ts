/**
 * The e2e harness: a packaged extension in a real VS Code (code-server) driven by Playwright in
 * Debian's Chromium. Each `startVsCode` gets a fresh profile (user-data-dir, extensions-dir), its
 * own code-server process group and its own browser; `close()` removes all of it.
 *
 * Set KEEP_E2E=1 to keep the temp folders (their path is printed), KEEL_E2E_HEADED=1 to watch,
 * KEEL_E2E_WORKERS=N to run the tasks of every e2e on N worker processes.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Frame, Page } from 'playwright-core';
import { childEnv, codeServerBinary, installExtension, REPO_ROOT, startCodeServer, type CodeServerProcess } from './support/codeServer';
import { launchChromium, runCommand, webviewFrame, webviewFrames, type FrameMatcher, type WebviewFrameOptions } from './support/workbench';

export { REPO_ROOT } from './support/codeServer';
export type { FrameMatcher, WebviewFrameOptions } from './support/workbench';

export interface StartVsCodeOptions {
  /** The .vsix to install into the fresh profile. */
  vsixPath: string;
  /** Extra user settings (e.g. `keel.provider`), merged over the harness defaults. */
  settings?: Record<string, unknown>;
  /** Folder to open. Default: a temp copy of examples/sample-workspace (removed on close). */
  workspace?: string;
  /** Extra environment for code-server and its extension host (e.g. ANTHROPIC_API_KEY). */
  env?: Record<string, string>;
  /** Default "Default Dark Modern". */
  colorTheme?: string;
  /** Default 1400x900. */
  viewport?: { width: number; height: number };
  /**
   * Keep VS Code's Workspace Trust on (default off, as a trust modal would block every click);
   * pass `security.workspace.trust.*` settings with it.
   */
  workspaceTrust?: boolean;
}

export interface VsCodeSession {
  page: Page;
  browser: Browser;
  userDataDir: string;
  extensionsDir: string;
  workspace: string;
  /** e.g. http://127.0.0.1:41234 */
  baseUrl: string;
  /** Runs a command from the palette by its full title, e.g. "Keel: New Task". */
  runCommand(title: string): Promise<void>;
  /** The first frame (webviews are nested iframes) that matches; polls until the timeout. */
  webviewFrame(matcher: FrameMatcher, opts?: WebviewFrameOptions): Promise<Frame>;
  /** All frames that match right now. */
  webviewFrames(matcher: FrameMatcher): Promise<Frame[]>;
  /** Writes test-results/<name>.png (repo root) and returns its path. */
  screenshot(name: string): Promise<string>;
  /** The text of every log file under the profile's logs folder whose name contains "Keel". */
  readKeelLog(): string;
  /** Everything code-server printed (for failure messages). */
  serverOutput(): string;
  /** Closes the browser, stops code-server's process group, removes temp folders. Idempotent. */
  close(): Promise<void>;
}

export const RESULTS_DIR = join(REPO_ROOT, 'test-results');
export const SAMPLE_WORKSPACE = join(REPO_ROOT, 'examples/sample-workspace');

/** Starts code-server with the extension installed and opens the workbench in Chromium. */
export async function startVsCode(opts: StartVsCodeOptions): Promise<VsCodeSession> {
  if (!existsSync(opts.vsixPath)) throw new Error(`no .vsix at ${opts.vsixPath}`);
  const binary = codeServerBinary();
  const root = mkdtempSync(join(tmpdir(), 'keel-e2e-'));
  const userDataDir = join(root, 'user-data');
  const extensionsDir = join(root, 'extensions');
  let workspace = opts.workspace;
  if (workspace === undefined) {
    workspace = join(root, 'workspace');
    try {
      cpSync(SAMPLE_WORKSPACE, workspace, { recursive: true });
    } catch (err) {
      rmSync(root, { recursive: true, force: true });
      throw err;
    }
  }
  mkdirSync(join(userDataDir, 'User'), { recursive: true });
  mkdirSync(extensionsDir, { recursive: true });
  const settings = {
    'security.workspace.trust.enabled': false,
    'workbench.startupEditor': 'none',
    'workbench.colorTheme': opts.colorTheme ?? 'Default Dark Modern',
    'workbench.tips.enabled': false,
    'extensions.autoCheckUpdates': false,
    'extensions.autoUpdate': false,
    'telemetry.telemetryLevel': 'off',
    // No gatekeeper lesson call after a completed run: the tests script the model's turns in
    // order, and the lesson call would take the next scripted turn. A test that exercises memory
    // passes its own `keel.memory.autoSave`, which wins (it is spread after this default).
    'keel.memory.autoSave': false,
    // KEEL_E2E_WORKERS=N runs every e2e with `keel.workers.max` N: each task's turns in worker
    // processes (docs/workers.md); absent, the extension's default (4) applies. KEEL_E2E_WORKERS=0 runs them in the host.
    ...e2eWorkers(),
    ...opts.settings,
  };
  writeFileSync(join(userDataDir, 'User', 'settings.json'), JSON.stringify(settings, null, 2));

  const env = childEnv(opts.env ?? {}, join(root, 'xdg'));
  let server: CodeServerProcess;
  try {
    installExtension(binary, opts.vsixPath, userDataDir, extensionsDir, env);
    server = await startCodeServer({ binary, userDataDir, extensionsDir, workspace, env, ...(opts.workspaceTrust ? { workspaceTrust: true } : {}) });
  } catch (err) {
    if (process.env.KEEP_E2E !== '1') rmSync(root, { recursive: true, force: true });
    throw err;
  }
  const baseUrl = `http://127.0.0.1:${server.port}`;

  let browser: Browser | undefined;
  const cleanup = async (): Promise<void> => {
    await browser?.close().catch(() => undefined);
    await server.stop();
    if (process.env.KEEP_E2E === '1') console.log(`KEEP_E2E=1: kept ${root}`);
    else rmSync(root, { recursive: true, force: true });
  };

  try {
    browser = await launchChromium();
    const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1400, height: 900 } });
    // Navigations and reloads get the same patience as the workbench: on a loaded 2-core machine
    // code-server's first page load has taken longer than Playwright's default 30 s.
    context.setDefaultNavigationTimeout(90_000);
    const page = await context.newPage();
    await page.goto(`${baseUrl}/?folder=${encodeURIComponent(workspace)}`, { waitUntil: 'domcontentloaded' });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: 60_000 });
    // The status bar appears once the workbench has restored its parts; commands run reliably after.
    await page.locator('.statusbar').waitFor({ state: 'visible', timeout: 60_000 });

    let closed: Promise<void> | undefined;
    const session: VsCodeSession = {
      page,
      browser,
      userDataDir,
      extensionsDir,
      workspace,
      baseUrl,
      runCommand: (title) => runCommand(page, title),
      webviewFrame: (matcher, o) => webviewFrame(page, matcher, o),
      webviewFrames: (matcher) => webviewFrames(page, matcher),
      screenshot: async (name) => {
        mkdirSync(RESULTS_DIR, { recursive: true });
        const path = join(RESULTS_DIR, `${name}.png`);
        await page.screenshot({ path });
        return path;
      },
      readKeelLog: () => readLogs(join(userDataDir, 'logs'), 'Keel'),
      serverOutput: () => server.output(),
      close: () => (closed ??= cleanup()),
    };
    return session;
  } catch (err) {
    const output = server.output();
    await cleanup();
    throw new Error(`${err instanceof Error ? err.message : String(err)}\n--- code-server output ---\n${output}`);
  }
}

/** `keel.workers.max` from KEEL_E2E_WORKERS (absent: the extension's default). Throws on a value that is not a count. */
function e2eWorkers(): Record<string, number> {
  const raw = process.env.KEEL_E2E_WORKERS;
  if (raw === undefined || raw === '') return {};
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0 || n > 16) throw new Error(`KEEL_E2E_WORKERS must be a whole number from 0 to 16, not "${raw}"`);
  return { 'keel.workers.max': n };
}

/** Concatenated contents of the files below `dir` whose name contains `nameFragment`. */
export function readLogs(dir: string, nameFragment: string): string {
  if (!existsSync(dir)) return '';
  const parts: string[] = [];
  const walk = (d: string): void => {
    for (const entry of readdirSync(d).sort()) {
      const p = join(d, entry);
      const st = statSync(p);
      if (st.isDirectory()) walk(p);
      else if (entry.includes(nameFragment)) parts.push(readFileSync(p, 'utf8'));
    }
  };
  walk(dir);
  return parts.join('\n');
}

export { ensureKeelVsix, KEEL_VSIX } from './support/vsix';
