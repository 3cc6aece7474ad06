/**
 * XSS corpus: text a model (or a tool, or a file) could put into the chat, rendered by the real
 * dist/webview.js in Chromium under the extension's CSP. The test checks by machine, not by eye,
 * that nothing executes (a global flag is never set, no dialog opens) and nothing loads (the page
 * requests nothing outside its own origin and the files it ships with).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskTranscript } from '../../src/shared/domain/transcript';
import { REPO_ROOT } from './support/codeServer';
import { openWebviewPage, type WebviewPage } from './support/webviewPage';
import { launchChromium } from './support/workbench';

const EVIL = 'http://evil.example';
/** Each payload tries to set window.__xss or load something from evil.example. */
const CORPUS: string[] = [
  '<script>window.__xss = "script"</script>',
  '<img src=x onerror="window.__xss=\'img-onerror\'">',
  '<IMG SRC="javascript:window.__xss=\'img-js\'">',
  '<svg onload="window.__xss=\'svg-onload\'"><script>window.__xss="svg-script"</script></svg>',
  '<svg><a xlink:href="javascript:window.__xss=\'svg-a\'"><text x="20" y="20">svg link</text></a></svg>',
  '<math><mtext><table><mglyph><style><img src=x onerror="window.__xss=\'mxss\'">',
  '<iframe src="javascript:window.parent.__xss=\'iframe\'"></iframe>',
  '<iframe srcdoc="<script>parent.__xss=\'srcdoc\'</script>"></iframe>',
  '<object data="javascript:window.__xss=\'object\'"></object><embed src="javascript:window.__xss=\'embed\'">',
  '<form action="javascript:window.__xss=\'form\'"><button>submit</button></form>',
  '<details open ontoggle="window.__xss=\'ontoggle\'">x</details>',
  '<div onmouseover="window.__xss=\'mouseover\'" style="position:fixed;inset:0">hover me</div>',
  '<a href="javascript:window.__xss=\'raw-a\'">raw anchor</a>',
  '[md js link](javascript:window.__xss=\'md-js\')',
  '[md js link upper](JaVaScRiPt:window.__xss=\'md-js-case\')',
  '[md js entity](&#106;avascript:window.__xss=\'md-entity\')',
  '[md js angle](<javascript:window.__xss=\'md-angle\'>)',
  '[md js tab](java\tscript:window.__xss=\'md-tab\')',
  '[ref link][evil]\n\n[evil]: javascript:window.__xss=\'md-ref\'',
  '<javascript:window.__xss=\'autolink\'>',
  '[data link](data:text/html;base64,PHNjcmlwdD5wYXJlbnQuX194c3M9J2RhdGEnPC9zY3JpcHQ+)',
  '[vbscript](vbscript:msgbox("x"))',
  `![tracking pixel](${EVIL}/pixel.png)`,
  `![data svg](data:image/svg+xml;base64,PHN2ZyBvbmxvYWQ9ImFsZXJ0KDEpIj48L3N2Zz4=)`,
  `<style>body { background: url(${EVIL}/style-bg.png) } @import url(${EVIL}/import.css);</style>`,
  `<div style="background-image: url(${EVIL}/inline-bg.png)">styled div</div>`,
  `<link rel="stylesheet" href="${EVIL}/link.css"><link rel="prefetch" href="${EVIL}/prefetch">`,
  `<meta http-equiv="refresh" content="0;url=javascript:window.__xss='meta'">`,
  `<base href="${EVIL}/">[relative](relative/path)`,
  `<video poster="${EVIL}/poster.png"><source src="${EVIL}/v.mp4"></video><audio src="${EVIL}/a.mp3"></audio>`,
  '```html\n<script>window.__xss="code-block"</script>\n<img src=x onerror="window.__xss=\'code-img\'">\n```',
  '`<img src=x onerror="window.__xss=\'inline-code\'">`',
  '<noscript><p title="</noscript><img src=x onerror=window.__xss=\'noscript\'>">',
  '<table><tr><td background="' + EVIL + '/td-bg.png">cell</td></tr></table>',
  '[click](https://example.com" onclick="window.__xss=\'attr-break\')',
  '<a href="#" onclick="window.__xss=\'onclick\'">onclick link</a>',
];

const ALLOWED_FILES = ['/', '/theme.css', '/dist/webview.js', '/dist/webview.css', '/dist/codicon.css', '/dist/codicon.ttf'];

const config = { provider: 'demo', providerLabel: 'Demo', model: 'demo model', mode: 'default' };

/** Typed, so a field the view's schema requires cannot be left out (an invalid snapshot is dropped). */
function transcriptWith(text: string, extra: { thinking?: string; toolInput?: string; user?: string } = {}): TaskTranscript {
  return {
    taskId: 't1',
    title: extra.user ?? 'XSS corpus',
    state: 'completed',
    tags: ['settled', 'completed'],
    turnState: 'done',
    turn: 1,
    streamMode: null,
    model: 'demo model',
    usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: 0 },
    items: [
      { kind: 'user', id: 'u1', text: extra.user ?? 'render this' },
      { kind: 'assistant', id: 'm1', model: 'demo model', text, thinking: extra.thinking ?? '', streaming: false },
      {
        kind: 'tool',
        id: 'c1',
        name: 'Write',
        input: { file_path: extra.toolInput ?? 'a.html', content: extra.toolInput ?? text },
        output: extra.toolInput ?? '',
        result: { isError: true, summary: extra.toolInput ?? 'x' },
      },
      { kind: 'error', id: 'e1', code: 'internal', message: extra.toolInput ?? 'err', retryable: true },
    ],
    done: true,
  };
}

describe('XSS corpus in the chat webview (Chromium, real CSP)', () => {
  let browser: Browser | undefined;
  let view: WebviewPage | undefined;
  const dialogs: string[] = [];

  beforeAll(async () => {
    if (!existsSync(join(REPO_ROOT, 'dist/webview.js'))) execFileSync('node', ['scripts/build.mjs'], { cwd: REPO_ROOT, stdio: 'inherit' });
    browser = await launchChromium();
    view = await openWebviewPage(browser);
    view.page.on('dialog', (d) => {
      dialogs.push(d.message());
      void d.dismiss();
    });
    await view.page.evaluate(() => {
      const w = window as unknown as { __violations: string[] };
      w.__violations = [];
      document.addEventListener('securitypolicyviolation', (e) => w.__violations.push(`${e.violatedDirective} ${e.blockedURI}`));
    });
  });

  afterAll(async () => {
    await view?.close();
    await browser?.close();
  });

  const flag = () => view!.page.evaluate(() => (window as unknown as { __xss?: string }).__xss ?? null);

  it('renders every payload as inert content: nothing runs, nothing loads', async () => {
    const v = view!;
    let seq = 1;
    for (const payload of CORPUS) {
      await v.send({
        type: 'snapshot',
        seq: seq++,
        transcript: transcriptWith(payload, { thinking: payload, toolInput: payload, user: payload }),
        config,
        permissions: [
          { requestId: `r${seq}`, taskId: 't1', toolCallId: 'c1', tool: payload, input: { command: payload }, summary: payload, reason: payload, diff: { path: payload, before: payload, after: `${payload}\n` } },
        ],
      });
      await v.page.locator('[data-testid="message-assistant"]').first().waitFor();
      // Hover and focus what is there, so handler-based payloads get their chance.
      await v.page.mouse.move(200, 300);
      await v.page.mouse.move(100, 500);
      expect(await flag(), payload).toBeNull();
      // The DOM the chat built holds no active element, handler or script URL (escaped text is fine).
      const found = await v.page.evaluate(() => {
        const bad: string[] = [];
        const scope = '[data-testid="message-assistant"], [data-testid="message-user"], [data-testid="tool-card"], [data-testid="permission-card"], [data-testid="error"]';
        const inScope = [...document.querySelectorAll(scope)].flatMap((r) => [r, ...r.querySelectorAll('*')]);
        for (const el of inScope) {
          if (/^(script|iframe|object|embed|style|svg|math|img|link|meta|base|form|video|audio|source)$/i.test(el.tagName)) bad.push(el.tagName);
          for (const a of el.attributes) {
            if (/^on/i.test(a.name)) bad.push(`${el.tagName}[${a.name}]`);
            if (/^(href|src|action|xlink:href|formaction)$/i.test(a.name) && /^\s*(javascript|data|vbscript):/i.test(a.value)) bad.push(`${el.tagName}[${a.name}=${a.value}]`);
            if (a.name === 'style' && el.closest('.keel-markdown')) bad.push(`${el.tagName}[style]`);
          }
        }
        return bad;
      });
      expect(found, payload).toEqual([]);
    }
  });

  it('streams payloads in small pieces (half-open tags) without running them', async () => {
    const v = view!;
    const base = 1000;
    await v.send({ type: 'snapshot', seq: base, transcript: { ...transcriptWith(''), items: [], done: false, state: 'running' }, config });
    await v.send({ type: 'event', seq: base + 1, event: { type: 'assistant_start', taskId: 't1', messageId: 'm9', model: 'demo model' } });
    const all = CORPUS.join('\n\n');
    let seq = base + 2;
    for (let i = 0; i < all.length; i += 7) {
      await v.send({ type: 'event', seq: seq++, event: { type: 'text', taskId: 't1', delta: all.slice(i, i + 7) } });
    }
    await v.send({ type: 'event', seq: seq++, event: { type: 'done', taskId: 't1', status: 'completed', stopReason: 'end_turn' } });
    await v.page.locator('[data-testid="message-assistant"][data-streaming="false"]').waitFor();
    expect(await flag()).toBeNull();
  });

  it('clicking every link only asks the host; the page never navigates', async () => {
    const v = view!;
    const before = ((await v.posted()) as Array<{ type: string }>).length;
    const url = v.page.url();
    const links = v.page.locator('[data-testid="message-assistant"] a');
    const n = await links.count();
    expect(n).toBeGreaterThan(0);
    for (let i = 0; i < n; i++) await links.nth(i).click({ force: true, timeout: 2_000 }).catch(() => undefined);
    expect(v.page.url()).toBe(url);
    expect(await flag()).toBeNull();
    const posted = ((await v.posted()) as Array<{ type: string; href?: string }>).slice(before);
    const hrefs = posted.filter((m) => m.type === 'openLink').map((m) => m.href ?? '');
    for (const h of hrefs) expect(h, h).toMatch(/^(https?:|mailto:|#)/i);
  });

  it('nothing executed, no dialog, and no request left the page\'s own files', async () => {
    const v = view!;
    expect(await flag()).toBeNull();
    expect(dialogs).toEqual([]);
    const origin = v.origin;
    const foreign = v.requests.filter((r) => !r.startsWith(`${origin}/`) || !ALLOWED_FILES.includes(new URL(r).pathname));
    expect(foreign, JSON.stringify(v.requests)).toEqual([]);
    expect(v.requests.some((r) => r.includes('evil.example'))).toBe(false);
  });
});
