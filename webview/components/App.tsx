import { useEffect, useMemo } from 'preact/hooks';
import type { Page, PermissionMode, StoredTaskState } from '../../src/shared/protocol/chatMessages';
import type { FromWebviewMessage } from '../../src/shared/protocol/fromWebview';
import { isBusy, waitingUnder } from '../format';
import { HistoryPage } from '../pages/HistoryPage';
import { LoopPage } from '../pages/LoopPage';
import { MemoryPage } from '../pages/MemoryPage';
import { SettingsPage } from '../pages/SettingsPage';
import { StoredTaskBanner } from '../pages/StoredTaskBanner';
import type { ChatStore } from '../store';
import { Composer } from './Composer';
import { Header } from './Header';
import { PermissionCard } from './PermissionCard';
import { RewindCard } from './RewindCard';
import { Transcript } from './Transcript';
import { WaitingLine } from './Messages';

export interface AppProps {
  store: ChatStore;
  post(message: FromWebviewMessage): void;
  initialDraft?: string;
  /** Remembers the page and draft across reloads of a hidden view. */
  persist?(state: { page?: Page; draft?: string }): void;
}

/**
 * Why the composer cannot send for the shown task: another window runs it (a message here would
 * have to take it over; the banner's Take over does that once that window lets go).
 */
export function heldElsewhere(stored: StoredTaskState | undefined): string | undefined {
  return stored?.heldElsewhere && stored.status === 'running' ? `Another VS Code window runs this task: continue it there, or Take over once it has stopped.` : undefined;
}

/** The chat page: header, notices, the page (chat transcript, history or settings) and the composer. */
export function App({ store, post, initialDraft = '', persist }: AppProps) {
  const transcript = store.transcript.value;
  const config = store.config.value;
  const hostErrors = store.hostErrors.value;
  const notices = store.notices.value;
  const permissions = store.permissions.value;
  const page = store.page.value;
  const busy = isBusy(transcript);
  const ready = store.ready.value;

  // Stable callbacks, so memoized rows do not re-render for a new function identity.
  const actions = useMemo(
    () => ({
      retry: () => post({ type: 'retry' }),
      resume: () => post({ type: 'resume' }),
      openLink: (href: string) => post({ type: 'openLink', href }),
      copy: (text: string) => post({ type: 'copy', text }),
      openDiff: (toolCallId: string) => post({ type: 'openDiff', toolCallId }),
      openSubtask: (toolCallId: string) => post({ type: 'openSubtask', toolCallId }),
      openMemory: (file: string) => post({ type: 'memoryAction', action: 'open', file }),
      rewind: (stepId: string) => post({ type: 'rewindPreview', stepId }),
      thoughtMs: (id: string) => store.thoughtMs(id),
      setPage: (p: Page) => {
        // Changing page is the next action: notices about the last one go (as a toast would).
        if (store.page.value !== p) store.clearNotices();
        store.page.value = p;
        persist?.({ page: p });
      },
    }),
    [post, store, persist],
  );

  // Set after the first snapshot is rendered, so whoever waits for it sees the DOM it describes.
  useEffect(() => {
    if (ready) document.body.dataset.keelReady = 'true';
  }, [ready]);

  // Esc anywhere in the chat cancels a running task (the composer handles it in the text box).
  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape' && !e.defaultPrevented && isBusy(store.transcript.value)) post({ type: 'cancel' });
    };
    document.addEventListener('keydown', onKey);
    return () => document.removeEventListener('keydown', onKey);
  }, [post, store]);

  const awaiting = useMemo(() => new Set(permissions.map((p) => p.toolCallId)), [permissions]);
  const mode: PermissionMode = config?.mode ?? 'default';

  return (
    <main class="keel-app" aria-busy={ready ? 'false' : 'true'}>
      <Header
        transcript={transcript}
        config={config}
        page={page}
        contextTokens={store.contextTokens.value}
        contextWindow={store.contextWindow.value}
        worker={store.worker.value}
        stored={store.stored.value}
        awaitingApproval={transcript !== null && permissions.some((p) => p.taskId === transcript.taskId)}
        onPage={actions.setPage}
      />
      {hostErrors.map((e) => (
        <div key={e.id} class="keel-error keel-host-error" data-testid="error" data-source="host" role="alert">
          <span class="codicon codicon-warning" aria-hidden="true" />
          <span class="keel-error-text">{e.message}</span>
          <button type="button" class="keel-icon-button" aria-label="Dismiss" title="Dismiss" onClick={() => store.dismissHostError(e.id)}>
            <span class="codicon codicon-close" aria-hidden="true" />
          </button>
        </div>
      ))}
      {notices.map((n) => (
        <div key={n.id} class="keel-notice" data-testid="notice" role="status">
          <span class="codicon codicon-info" aria-hidden="true" />
          <span class="keel-error-text">{n.message}</span>
          <button type="button" class="keel-icon-button" aria-label="Dismiss" title="Dismiss" onClick={() => store.dismissNotice(n.id)}>
            <span class="codicon codicon-close" aria-hidden="true" />
          </button>
        </div>
      ))}
      {page === 'history' ? (
        <HistoryPage
          tasks={store.tasks.value}
          onLoad={() => post({ type: 'listTasks' })}
          onOpen={(taskId) => {
            actions.setPage('chat');
            post({ type: 'openTask', taskId });
          }}
          onResume={(taskId) => {
            actions.setPage('chat');
            post({ type: 'resumeTask', taskId });
          }}
          onExport={(taskId, format) => post({ type: 'exportTask', taskId, format })}
          onDelete={(taskId) => post({ type: 'deleteTask', taskId })}
        />
      ) : page === 'settings' ? (
        <SettingsPage
          settings={store.settings.value}
          result={store.settingsResult.value}
          post={post}
          onEdited={() => {
            store.settingsResult.value = null;
          }}
          mcp={store.mcp.value}
          onMemory={() => actions.setPage('memory')}
        />
      ) : page === 'memory' ? (
        <MemoryPage state={store.memories.value} search={store.memorySearch.value} post={post} />
      ) : page === 'loop' ? (
        <LoopPage
          state={store.loops.value}
          selected={store.loopSelected.value}
          onSelect={(name) => {
            store.loopSelected.value = name;
          }}
          post={post}
          onOpenTask={(taskId) => {
            actions.setPage('chat');
            post({ type: 'openTask', taskId });
          }}
        />
      ) : transcript ? (
        <>
        {store.stored.value && <StoredTaskBanner stored={store.stored.value} onResume={actions.resume} />}
        <Transcript
          transcript={transcript}
          thoughtMs={actions.thoughtMs}
          awaiting={awaiting}
          onRetry={actions.retry}
          onResume={actions.resume}
          onOpenLink={actions.openLink}
          onCopy={actions.copy}
          onOpenDiff={actions.openDiff}
          onOpenSubtask={actions.openSubtask}
          onOpenMemory={actions.openMemory}
          onRewind={busy || heldElsewhere(store.stored.value) ? undefined : actions.rewind}
        />
        {transcript.waiting && !store.stored.value && waitingUnder(transcript) < 0 && <WaitingLine waiting={transcript.waiting} />}
        </>
      ) : (
        <section class="keel-empty" data-testid="empty-state" aria-label="No task open">
          <span class="codicon codicon-comment-discussion keel-empty-icon" aria-hidden="true" />
          <h2>What should Keel do?</h2>
          <p>Describe a change, a question or a bug. Keel works in this workspace and asks before it edits files or runs commands.</p>
          {/* The mode is the composer's selector, in words, just below. */}
          {config && <p class="keel-note">{`${config.providerLabel} · ${config.model}`}</p>}
        </section>
      )}
      {page === 'chat' && store.rewind.value && (
        <div class="keel-permission-dock" aria-label="Rewind">
          <RewindCard
            preview={store.rewind.value}
            onApply={(previewId, scope, overwrite) => {
              store.rewind.value = null;
              post({ type: 'rewindApply', previewId, scope, overwrite });
            }}
            onCancel={(previewId) => {
              store.rewind.value = null;
              post({ type: 'rewindCancel', previewId });
            }}
            onOpenDiff={(previewId, path) => post({ type: 'rewindOpenDiff', previewId, path })}
          />
        </div>
      )}
      {permissions.length > 0 &&
        (page === 'chat' ? (
          <div class="keel-permission-dock" aria-label="Permission requests">
            {permissions.map((p) => (
              <PermissionCard
                key={p.requestId}
                request={p}
                otherTask={p.taskId !== transcript?.taskId}
                onAnswer={(requestId, decision, feedback, always, review) => {
                  store.answered(requestId);
                  post({ type: 'permissionAnswer', requestId, decision, ...(feedback ? { feedback } : {}), ...(always ? { always } : {}), ...(review ? { review } : {}) });
                }}
                onOpenDiff={actions.openDiff}
              />
            ))}
          </div>
        ) : (
          <button type="button" class="keel-notice keel-permission-banner" onClick={() => actions.setPage('chat')}>
            <span class="codicon codicon-shield" aria-hidden="true" /> Keel is waiting for your approval — back to the chat
          </button>
        ))}
      {/* Other pages (history, settings, loops, memory) have the whole view; the chat has the composer. */}
      {page === 'chat' && (
      <Composer
        busy={busy}
        disabled={heldElsewhere(store.stored.value)}
        hasTask={transcript !== null}
        mode={mode}
        initialDraft={initialDraft}
        mentions={store.mentions.value}
        queued={transcript?.queued ?? []}
        onWithdraw={(id) => post({ type: 'withdrawQueued', id })}
        returned={store.returned.value}
        focusRequest={store.focusRequest.value}
        onSend={(text, images) => {
          store.clearNotices();
          actions.setPage('chat');
          post({ type: 'prompt', text, ...(images.length > 0 ? { images } : {}) });
        }}
        onCancel={() => post({ type: 'cancel' })}
        onMode={(m) => post({ type: 'setMode', mode: m })}
        onDraft={(draft) => persist?.({ draft })}
        onMentionQuery={(queryId, query) => post({ type: 'mentionQuery', queryId, query })}
        commands={store.commands.value}
        onCommandQuery={(queryId, query) => post({ type: 'commandQuery', queryId, query })}
        injected={store.composerText.value}
      />
      )}
    </main>
  );
}
