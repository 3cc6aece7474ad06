import { render } from 'preact';
import { App } from './components/App';
import { ChatStore } from './store';
import './styles.css';
import { hostChannel } from './vscodeApi';

/**
 * The chat page's entry: validate and sequence host messages into the store, render, and say
 * `ready` (once per page load) so the host answers with a snapshot.
 */
const channel = hostChannel();
const store = new ChatStore({
  onSeq: (lastSeq) => channel.persist({ lastSeq }),
  log: (message) => console.warn(`[keel] ${message}`),
});

window.addEventListener('message', (e: MessageEvent<unknown>) => store.receive(e.data));

const root = document.getElementById('root');
if (root) render(<App store={store} post={(m) => channel.post(m)} />, root);

const previous = channel.persisted();
channel.post(previous ? { type: 'ready', lastSeq: previous.lastSeq } : { type: 'ready' });
