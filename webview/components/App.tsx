import { useEffect } from 'preact/hooks';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import { isBusy } from '../format';
import type { ChatStore } from '../store';
import { Composer } from './Composer';
import { Header } from './Header';
import { Transcript } from './Transcript';

export interface AppProps {
  store: ChatStore;
  post(message: FromWebviewMessage): void;
}

/** The chat page: header, host errors, the transcript (or the empty state) and the composer. */
export function App({ store, post }: AppProps) {
  const transcript = store.transcript.value;
  const config = store.config.value;
  const hostErrors = store.hostErrors.value;
  const busy = isBusy(transcript);
  const ready = store.ready.value;

  // Set after the first snapshot is rendered, so whoever waits for it sees the DOM it describes.
  useEffect(() => {
    if (ready) document.body.dataset.keelReady = 'true';
  }, [ready]);

  return (
    <main class="keel-app" aria-busy={ready ? 'false' : 'true'}>
      <Header transcript={transcript} config={config} onNewTask={() => post({ type: 'newTask' })} />
      {hostErrors.map((e) => (
        <div key={e.id} class="keel-error keel-host-error" data-testid="error" data-source="host" role="alert">
          <span class="codicon codicon-warning" aria-hidden="true" />
          <span class="keel-error-text">{e.message}</span>
          <button type="button" class="keel-icon-button" aria-label="Dismiss" title="Dismiss" onClick={() => store.dismissHostError(e.id)}>
            <span class="codicon codicon-close" aria-hidden="true" />
          </button>
        </div>
      ))}
      {transcript ? (
        <Transcript transcript={transcript} onRetry={() => post({ type: 'retry' })} onOpenLink={(href) => post({ type: 'openLink', href })} />
      ) : (
        <section class="keel-empty" data-testid="empty-state" aria-label="No task open">
          <span class="codicon codicon-comment-discussion keel-empty-icon" aria-hidden="true" />
          <h2>What should Keel do?</h2>
          <p>Describe a change, a question or a bug. Keel works in this workspace and asks before it edits files or runs commands.</p>
          {config && <p class="keel-note">{`${config.providerLabel} · ${config.model} · mode ${config.mode}`}</p>}
        </section>
      )}
      <Composer
        busy={busy}
        hasTask={transcript !== null}
        onSend={(text) => post({ type: 'prompt', text })}
        onCancel={() => post({ type: 'cancel' })}
      />
    </main>
  );
}
