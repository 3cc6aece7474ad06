// The chat webview on a long task, measured in Chromium (Debian's, through playwright-core): the
// real dist/webview.js under the extension's CSP (test/e2e/support/webviewPage.ts).
//   open_ms              a 10,000-message snapshot posted to the page → rendered (rAF after the DOM shows it)
//   dom_nodes            elements in the document after opening it, and after scrolling to the middle (max)
//   heap_mb              JS heap used after a forced GC, with the task open and streamed into
//   token_to_dom_p95_ms  a text delta posted to the page → the streaming message's DOM changed (p95 of 400)
// Goals (issue #6): dom_nodes ≤ 3000, heap_mb ≤ 150, token_to_dom_p95_ms ≤ 50. Prints one JSON line.
import { chromium } from 'playwright-core';
import { openWebviewPage } from '../test/e2e/support/webviewPage';
import { parseToWebview, type SnapshotMessage, type ToWebviewMessage } from '../src/shared/protocol/toWebview';

const MESSAGES = 10_000;
const TOKENS = 400;
/** How long the page may take to show what was posted before the bench fails saying so. */
const PAGE_LIMIT_MS = 60_000;

type Transcript = NonNullable<SnapshotMessage['transcript']>;

/** A task of `n` messages: user prompts, answers with Markdown and code, tool cards. */
function bigTranscript(n: number): Transcript {
  const items: Transcript['items'] = [];
  for (let i = 0; i < n; i++) {
    const k = i % 4;
    if (k === 0) items.push({ kind: 'user', id: `u${i}`, text: `Question ${i}: please look at src/file${i}.ts and fix the bug.` });
    else if (k === 1)
      items.push({
        kind: 'assistant',
        id: `m${i}`,
        model: 'claude-sonnet-5-5',
        text: `Here is **answer ${i}** with a [link](https://example.com/${i}) and code:\n\n\`\`\`ts\nexport function f${i}(x: number): number {\n  return x * ${i}; // times ${i}\n}\n\`\`\`\n\nDone.`,
        thinking: i % 8 === 1 ? `thinking about ${i}` : '',
        streaming: false,
      });
    else if (k === 2) items.push({ kind: 'tool', id: `c${i}`, name: i % 3 ? 'Read' : 'Bash', input: { file_path: `src/file${i}.ts`, command: 'npm test' }, output: i % 3 ? '' : 'ok\n'.repeat(5), result: { isError: false, summary: 'exit 0' } });
    else items.push({ kind: 'assistant', id: `m${i}`, model: 'claude-sonnet-5-5', text: `Short reply ${i}.`, thinking: '', streaming: false });
  }
  return {
    taskId: 'big',
    title: 'A very long task',
    state: 'running',
    tags: ['running'],
    turnState: 'streaming',
    turn: n,
    streamMode: 'responding',
    model: 'claude-sonnet-5-5',
    usage: { inputTokens: 120_000, outputTokens: 40_000, cacheReadTokens: 10_000, cacheWriteTokens: 0, costUsd: 1.23 },
    items,
    done: false,
  };
}

/** `m`, once the page's own parser accepts it (it drops what it does not, with a console warning). */
function checked<M extends ToWebviewMessage>(m: M): M {
  const r = parseToWebview(m);
  if (!r.ok) throw new Error(`the bench's ${m.type} message is not one the page accepts: ${r.error}`);
  return m;
}

async function main() {
  const browser = await chromium.launch({
    executablePath: process.env.KEEL_CHROMIUM ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic', '--disable-dev-shm-usage', '--js-flags=--expose-gc'],
  });
  try {
    const view = await openWebviewPage(browser, { viewport: { width: 420, height: 900 } });
    const { page } = view;
    page.on('crash', () => process.stderr.write('webview bench: the page crashed\n'));
    page.on('console', (m) => process.stderr.write(`webview bench: page console ${m.type()}: ${m.text()}\n`));
    page.on('pageerror', (e) => process.stderr.write(`webview bench: page error: ${e.message}\n`));
    const cdp = await page.context().newCDPSession(page);
    await cdp.send('Performance.enable');

    // The snapshot the host would post, built here with the protocol's types and checked with the
    // page's own parser (a bench whose message the page drops measures nothing: until 28 Nov 2026
    // its transcript lacked the state tags, the page dropped it, and the bench waited forever).
    const snapshot = checked({ type: 'snapshot', seq: 1, transcript: bigTranscript(MESSAGES), config: { provider: 'anthropic', providerLabel: 'Anthropic', model: 'claude-sonnet-5-5', mode: 'default' }, permissions: [] });
    checked({ type: 'event', seq: 2, event: { type: 'assistant_start', taskId: 'big', messageId: 'streamed', model: 'claude-sonnet-5-5' } });
    checked({ type: 'event', seq: 3, event: { type: 'text', taskId: 'big', delta: 'The ' } });
    const openMs = await page.evaluate(async ({ message, limitMs }) => {
      const t0 = performance.now();
      window.postMessage(message, '*');
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        if (document.body.dataset.keelReady === 'true' && document.querySelector('[data-testid="message-assistant"]')) break;
        if (performance.now() - t0 > limitMs) throw new Error(`the page did not show the transcript within ${limitMs} ms`);
      }
      await new Promise((r) => requestAnimationFrame(r));
      return performance.now() - t0;
    }, { message: snapshot, limitMs: PAGE_LIMIT_MS });

    const countNodes = () => page.evaluate(() => document.getElementsByTagName('*').length);
    const nodesAtEnd = await countNodes();
    await page.evaluate(async () => {
      const s = document.querySelector('.keel-transcript');
      if (s) s.scrollTop = s.scrollHeight / 2;
      for (let i = 0; i < 5; i++) await new Promise((r) => requestAnimationFrame(r));
    });
    const nodesMiddle = await countNodes();
    await page.evaluate(async () => {
      const s = document.querySelector('.keel-transcript');
      if (s) s.scrollTop = s.scrollHeight;
      for (let i = 0; i < 5; i++) await new Promise((r) => requestAnimationFrame(r));
    });

    // Stream tokens into a new message at the end, posted 2-20 ms apart as a model streams them.
    const latencies = await page.evaluate(async ({ tokens, startSeq, limitMs }) => {
      let seq = startSeq;
      const post = (event: unknown) => window.postMessage({ type: 'event', seq: seq++, event }, '*');
      post({ type: 'assistant_start', taskId: 'big', messageId: 'streamed', model: 'claude-sonnet-5-5' });
      const t0 = performance.now();
      for (;;) {
        await new Promise((r) => requestAnimationFrame(r));
        if (document.querySelector('[data-testid="message-assistant"][data-streaming="true"]')) break;
        if (performance.now() - t0 > limitMs) throw new Error(`the page did not show the streaming message within ${limitMs} ms`);
      }
      const target = document.querySelector('[data-testid="message-assistant"][data-streaming="true"]')!;
      const pending: number[] = [];
      const out: number[] = [];
      const observer = new MutationObserver(() => {
        const now = performance.now();
        for (const t of pending.splice(0)) out.push(now - t);
      });
      observer.observe(target, { subtree: true, childList: true, characterData: true });
      const words = 'The quick brown fox jumps over the lazy dog while the agent writes `code` and **bold** text. '.split(' ');
      for (let i = 0; i < tokens; i++) {
        pending.push(performance.now());
        post({ type: 'text', taskId: 'big', delta: `${words[i % words.length]} ` });
        await new Promise((r) => setTimeout(r, 2 + ((i * 7) % 19)));
      }
      for (let i = 0; i < 10 && pending.length; i++) await new Promise((r) => requestAnimationFrame(r));
      observer.disconnect();
      return out;
    }, { tokens: TOKENS, startSeq: 2, limitMs: PAGE_LIMIT_MS });

    const nodesAfterStream = await countNodes();
    await cdp.send('HeapProfiler.collectGarbage');
    const metrics = (await cdp.send('Performance.getMetrics')).metrics;
    const heap = metrics.find((m) => m.name === 'JSHeapUsedSize')?.value ?? 0;
    const sorted = latencies.slice().sort((a, b) => a - b);
    const pct = (p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? -1;
    const result = {
      messages: MESSAGES,
      open_ms: Number(openMs.toFixed(1)),
      dom_nodes: Math.max(nodesAtEnd, nodesMiddle, nodesAfterStream),
      dom_nodes_at_end: nodesAtEnd,
      dom_nodes_middle: nodesMiddle,
      heap_mb: Number((heap / (1024 * 1024)).toFixed(1)),
      tokens_streamed: TOKENS,
      tokens_measured: latencies.length,
      token_to_dom_p50_ms: Number(pct(50).toFixed(1)),
      token_to_dom_p95_ms: Number(pct(95).toFixed(1)),
      token_to_dom_max_ms: Number((sorted[sorted.length - 1] ?? -1).toFixed(1)),
      goals: { dom_nodes: 3000, heap_mb: 150, token_to_dom_p95_ms: 50 },
      chromium: browser.version(),
    };
    if (latencies.length !== TOKENS) throw new Error(`measured ${latencies.length} of ${TOKENS} tokens`);
    await view.close();
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } finally {
    await browser.close();
  }
}
void main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
