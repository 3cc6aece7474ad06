/**
 * The chat webview outside VS Code, for XSS tests and the webview benchmark: dist/webview.js in a
 * plain Chromium page served from a loopback HTTP server, under the same Content-Security-Policy
 * the extension uses (renderWebviewHtml), with a stub `acquireVsCodeApi` that records what the
 * page posts. Host messages are delivered as window `message` events, as in a real webview.
 */
import { readFileSync } from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { renderWebviewHtml } from '../../../src/extension/webviewHtml';

export interface WebviewPage {
  page: Page;
  /** e.g. http://127.0.0.1:40123 — everything the page may load comes from here. */
  origin: string;
  /** Every URL the page requested, in order. */
  requests: string[];
  /** Messages the page posted to the "host", in order. */
  posted(): Promise<unknown[]>;
  /** Delivers a host->webview message (as `window.postMessage` from the host would). */
  send(message: unknown): Promise<void>;
  close(): Promise<void>;
}

const THEMES = {
  dark: `body{--vscode-foreground:#cccccc;--vscode-sideBar-background:#181818;--vscode-editor-background:#1f1f1f;--vscode-descriptionForeground:#9d9d9d;--vscode-font-family:system-ui,sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-editor-font-size:12px;--vscode-button-background:#0078d4;--vscode-button-foreground:#fff;--vscode-input-background:#313131;--vscode-input-foreground:#ccc;--vscode-focusBorder:#0078d4;--vscode-textLink-foreground:#4daafc;--vscode-textCodeBlock-background:#2b2b2b;--vscode-badge-background:#616161;--vscode-badge-foreground:#f8f8f8;--vscode-panel-border:#2b2b2b;--vscode-errorForeground:#f85149;--vscode-editorWarning-foreground:#cca700}`,
  light: `body{--vscode-foreground:#3b3b3b;--vscode-sideBar-background:#f8f8f8;--vscode-editor-background:#fff;--vscode-descriptionForeground:#717171;--vscode-font-family:system-ui,sans-serif;--vscode-font-size:13px;--vscode-editor-font-family:monospace;--vscode-editor-font-size:12px;--vscode-button-background:#005fb8;--vscode-button-foreground:#fff;--vscode-input-background:#fff;--vscode-input-foreground:#3b3b3b;--vscode-focusBorder:#005fb8;--vscode-textLink-foreground:#005fb8;--vscode-textCodeBlock-background:#f0f0f0;--vscode-badge-background:#cccccc;--vscode-badge-foreground:#3b3b3b;--vscode-panel-border:#e5e5e5;--vscode-errorForeground:#f85149;--vscode-editorWarning-foreground:#bf8803}`,
};

const TYPES: Record<string, string> = { '.js': 'text/javascript', '.css': 'text/css', '.ttf': 'font/ttf', '.html': 'text/html' };

/** Serves the page and dist/ on 127.0.0.1 and opens it in a new page of `browser`. */
export async function openWebviewPage(
  browser: Browser,
  opts: { theme?: 'dark' | 'light'; viewport?: { width: number; height: number }; /** Default: dist/ under the current directory (the repo root). */ distDir?: string } = {},
): Promise<WebviewPage> {
  const distDir = opts.distDir ?? resolve('dist');
  const nonce = 'bm9uY2Uta2VlbC10ZXN0';
  let origin = '';
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/') {
      const html = renderWebviewHtml({
        cspSource: origin,
        nonce,
        scriptUri: `${origin}/dist/webview.js`,
        styleUri: `${origin}/dist/webview.css`,
        codiconUri: `${origin}/dist/codicon.css`,
        title: 'Keel',
      })
        .replace('<head>', `<head>\n<link rel="stylesheet" href="${origin}/theme.css">`)
        .replace('<body>', `<body class="vscode-${opts.theme ?? 'dark'}">`)
        .replace(
          '<div id="root"></div>',
          `<div id="root"></div>\n<script nonce="${nonce}">window.__posted=[];window.__state=undefined;window.acquireVsCodeApi=function(){return{postMessage:function(m){window.__posted.push(JSON.parse(JSON.stringify(m)))},getState:function(){return window.__state},setState:function(s){window.__state=s}}};</script>`,
        );
      res.writeHead(200, { 'content-type': 'text/html' }).end(html);
      return;
    }
    if (url.pathname === '/theme.css') {
      res.writeHead(200, { 'content-type': 'text/css' }).end(THEMES[opts.theme ?? 'dark']);
      return;
    }
    const m = /^\/dist\/([\w.-]+)$/.exec(url.pathname);
    if (m?.[1]) {
      try {
        const body = readFileSync(join(distDir, m[1]));
        res.writeHead(200, { 'content-type': TYPES[m[1].slice(m[1].lastIndexOf('.'))] ?? 'application/octet-stream' }).end(body);
      } catch {
        res.writeHead(404).end();
      }
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 420, height: 800 } });
  const page = await context.newPage();
  const requests: string[] = [];
  page.on('request', (r) => requests.push(r.url()));
  await page.goto(`${origin}/`);
  await page.waitForFunction(() => (window as unknown as { __posted: unknown[] }).__posted.length > 0);
  return {
    page,
    origin,
    requests,
    posted: () => page.evaluate(() => (window as unknown as { __posted: unknown[] }).__posted),
    send: (message) => page.evaluate((m) => window.postMessage(m, '*'), message),
    close: async () => {
      await context.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
