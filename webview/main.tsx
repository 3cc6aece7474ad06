import { render } from 'preact';
import { parseFromWebview } from '../src/shared/protocol/fromWebview';
import type { FromWebviewMessage } from '../src/shared/protocol/fromWebview';
import { App } from './components/App';
import { ChatStore } from './store';
import './styles.css';
import { hostChannel } from './vscodeApi';

/**
 * The chat page's entry: validate and sequence host messages into the store, render, and say
 * `ready` (once per page load) so the host answers with a snapshot. What the page sends is
 * validated too: an invalid message is logged and not sent.
 */
const channel = hostChannel();
const previous = channel.persisted();
const store = new ChatStore({
  onSeq: (lastSeq) => channel.persist({ lastSeq }),
  log: (message) => console.warn(`[keel] ${message}`),
  ...(previous?.page ? { initialPage: previous.page } : {}),
});

const post = (message: FromWebviewMessage): void => {
  const checked = parseFromWebview(message);
  if (!checked.ok) {
    console.warn(`[keel] not sending an invalid ${String(message.type)} message: ${checked.error}`);
    return;
  }
  channel.post(checked.message);
};

window.addEventListener('message', (e: MessageEvent<unknown>) => store.receive(e.data));

const root = document.getElementById('root');
if (root) render(<App store={store} post={post} initialDraft={previous?.draft ?? ''} persist={(s) => channel.persist(s)} />, root);

post(previous ? { type: 'ready', lastSeq: previous.lastSeq } : { type: 'ready' });
