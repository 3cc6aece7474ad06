import { useRef, useState } from 'preact/hooks';

export interface ComposerProps {
  busy: boolean;
  hasTask: boolean;
  onSend(text: string): void;
  onCancel(): void;
}

/** The message box: Enter sends, Shift+Enter adds a line; Cancel while the task works. */
export function Composer({ busy, hasTask, onSend, onCancel }: ComposerProps) {
  const [text, setText] = useState('');
  const ref = useRef<HTMLTextAreaElement>(null);
  const canSend = !busy && text.trim().length > 0;

  const send = () => {
    if (!canSend) return;
    onSend(text);
    setText('');
    ref.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      send();
    }
  };

  return (
    <form
      class="keel-composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <textarea
        ref={ref}
        class="keel-input"
        data-testid="prompt-input"
        aria-label="Message Keel"
        placeholder={hasTask ? 'Reply to Keel (Enter to send, Shift+Enter for a new line)' : 'Ask Keel to do something (Enter to send)'}
        rows={3}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={onKeyDown}
      />
      <div class="keel-composer-actions">
        {busy && (
          <button type="button" class="keel-button keel-button-secondary" data-testid="cancel" onClick={onCancel}>
            <span class="codicon codicon-debug-stop" aria-hidden="true" /> Cancel
          </button>
        )}
        <button type="submit" class="keel-button" data-testid="send" disabled={!canSend} aria-label="Send">
          <span class="codicon codicon-send" aria-hidden="true" /> Send
        </button>
      </div>
    </form>
  );
}
