import type { ProviderRequest } from './types';
import { ScriptedProvider } from './scripted';
import type { ScriptedTurn } from './scripted';

const ECHO_LIMIT = 400;

/** The text of the latest user message (what the user just typed). */
function lastUserText(request: ProviderRequest): string {
  for (let i = request.messages.length - 1; i >= 0; i -= 1) {
    const m = request.messages[i];
    if (m?.role !== 'user') continue;
    const text = m.content.flatMap((b) => (b.type === 'text' ? [b.text] : [])).join('\n').trim();
    if (text) return text;
  }
  return '';
}

/** The demo model's answer to a request: a friendly markdown note that echoes the prompt. */
export function demoAnswer(request: ProviderRequest): ScriptedTurn {
  const said = lastUserText(request);
  const echo = said.length > ECHO_LIMIT ? `${said.slice(0, ECHO_LIMIT)}…` : said;
  const youSaid = !echo
    ? 'You said nothing yet — type a message and I will echo it back.'
    : echo.includes('\n')
      ? `You said:\n\n${echo.split('\n').map((l) => `> ${l}`).join('\n')}`
      : `You said: “${echo}”`;
  const text = [
    "Hi! I'm the **demo model** built into Keel. I run entirely inside the extension: no API key, no network, and no real intelligence — I only show how Keel streams an answer.",
    '',
    youSaid,
    '',
    'To work with a real model:',
    '',
    '- run **Keel: Set API Key** (or set `ANTHROPIC_API_KEY`) and choose the `anthropic` provider, or',
    '- set `keel.provider` to `openai-compatible` and point `keel.openai.baseUrl` at a local server such as Ollama or LM Studio.',
  ].join('\n');
  const words = Math.ceil(text.length / 4);
  return { blocks: [{ type: 'text', text }], chunkSize: 6, delayMs: 15, usage: { input_tokens: Math.ceil(said.length / 4) + 20, output_tokens: words }, model: 'demo model' };
}

/** The `demo` provider: the scripted provider answering every request with {@link demoAnswer}. */
export function createDemoProvider(opts: { delayMs?: number } = {}): ScriptedProvider {
  return new ScriptedProvider(
    (request) => {
      const turn = demoAnswer(request);
      return opts.delayMs === undefined ? turn : { ...turn, delayMs: opts.delayMs };
    },
    { id: 'demo', label: 'demo model' },
  );
}
