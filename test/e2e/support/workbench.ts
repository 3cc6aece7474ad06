/**
 * Browser-side helpers for driving the VS Code workbench served by code-server: Chromium via
 * playwright-core, the command palette, and finding webview content in nested iframes.
 */
import { chromium, type Browser, type Frame, type Page } from 'playwright-core';

/** Debian's chromium; `npx playwright install` cannot download browsers on these machines. */
export const CHROMIUM_PATH = process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium';

const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

/** Launches headless Chromium (headed when KEEL_E2E_HEADED=1, for watching a run). */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: process.env.KEEL_E2E_HEADED !== '1',
    args: CHROMIUM_ARGS,
  });
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Runs a command from the command palette by its full title (e.g. "Keel: New Task"):
 * opens the palette, types the title, waits until the highlighted row is that command, presses
 * Enter and waits for the palette to close. The palette does not refresh when an extension
 * registers its commands while it is open, so it is closed and reopened until the command shows
 * up. Throws (listing what the palette showed) if no row with exactly that label is highlighted
 * within the timeout.
 */
export async function runCommand(page: Page, title: string, timeoutMs = 30_000): Promise<void> {
  const widget = page.locator('.quick-input-widget');
  const input = widget.locator('.quick-input-box input');
  const focusedLabel = widget.locator('.quick-input-list .monaco-list-row.focused .label-name');
  const deadline = Date.now() + timeoutMs;
  let lastSeen: string[] = [];
  for (;;) {
    if (await openPalette(page, input)) {
      await input.fill(`>${title}`);
      const attemptEnd = Math.min(deadline, Date.now() + 3_000);
      while (Date.now() < attemptEnd) {
        const labels = await focusedLabel.allTextContents().catch(() => [] as string[]);
        if (labels.some((l) => normalise(l) === title)) {
          await page.keyboard.press('Enter');
          await paletteLeft(widget, input, `>${title}`);
          return;
        }
        await sleep(100);
      }
      lastSeen = (await widget.locator('.quick-input-list .monaco-list-row .label-name').allTextContents()).map(normalise);
      await page.keyboard.press('Escape');
    }
    if (Date.now() > deadline) {
      throw new Error(`command "${title}" not found in the palette; it showed: ${JSON.stringify(lastSeen)}`);
    }
    await sleep(500);
  }
}

/**
 * Waits until the palette no longer shows the command that was run: it closed, or the command
 * opened a quick input of its own in the same widget (an input box, a quick pick) — which can
 * happen before a check for "closed" ever sees it closed. Throws after 10 s.
 */
async function paletteLeft(widget: ReturnType<Page['locator']>, input: ReturnType<Page['locator']>, typed: string): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!(await widget.isVisible())) return;
    const value = await input.inputValue({ timeout: 1_000 }).catch(() => undefined);
    if (value !== undefined && value !== typed) return;
    if (Date.now() > deadline) throw new Error(`the palette still shows "${typed}" 10 s after Enter`);
    await sleep(100);
  }
}

/** Opens the command palette; true once its input is visible and focused. */
async function openPalette(page: Page, input: ReturnType<Page['locator']>): Promise<boolean> {
  await page.keyboard.press('Control+Shift+P');
  try {
    await input.waitFor({ state: 'visible', timeout: 3_000 });
    return await input.evaluate((el) => el === document.activeElement);
  } catch {
    return false;
  }
}

function normalise(label: string): string {
  return label.replace(/\s+/g, ' ').trim();
}

/** What identifies a webview frame: a CSS selector that must match inside it, or a predicate. */
export type FrameMatcher = string | ((frame: Frame) => Promise<boolean>);

export interface WebviewFrameOptions {
  timeoutMs?: number;
  /** Frames to skip, e.g. the sidebar's frame when looking for the editor tab's. */
  exclude?: readonly Frame[];
}

async function matches(frame: Frame, matcher: FrameMatcher): Promise<boolean> {
  try {
    if (typeof matcher === 'string') return (await frame.$(matcher)) !== null;
    return await matcher(frame);
  } catch {
    return false; // detached or navigating
  }
}

/** The frames of the page (nested ones included) that currently match. */
export async function webviewFrames(page: Page, matcher: FrameMatcher): Promise<Frame[]> {
  const found: Frame[] = [];
  for (const frame of page.frames()) {
    if (frame.isDetached()) continue;
    if (await matches(frame, matcher)) found.push(frame);
  }
  return found;
}

/**
 * Polls `page.frames()` until a frame (webview content lives two iframes deep) matches.
 * Throws after the timeout (default 30 s), naming the frames it saw.
 */
export async function webviewFrame(page: Page, matcher: FrameMatcher, opts: WebviewFrameOptions = {}): Promise<Frame> {
  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  const exclude = new Set(opts.exclude ?? []);
  for (;;) {
    const frame = (await webviewFrames(page, matcher)).find((f) => !exclude.has(f));
    if (frame) return frame;
    if (Date.now() > deadline) {
      const urls = page.frames().map((f) => f.url().slice(0, 120));
      throw new Error(`no frame matched ${typeof matcher === 'string' ? matcher : 'the predicate'}; frames: ${JSON.stringify(urls)}`);
    }
    await sleep(250);
  }
}

/** Types `text` into a chat's composer and sends it, as a person does (Enter). */
export async function sendPrompt(chat: Frame, text: string): Promise<void> {
  const input = chat.locator('[data-testid="prompt-input"]');
  await input.waitFor({ state: 'visible' });
  await input.fill(text);
  await input.press('Enter');
}
