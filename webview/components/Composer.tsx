import { useEffect, useRef, useState } from 'preact/hooks';
import { PERMISSION_MODE_INFO, SELECTABLE_MODES, type PermissionMode } from '../../src/shared/domain/permissionModes';
import type { SlashCommand } from '../../src/shared/protocol/toWebview';
import { activeMention, insertMention } from '../mentions';
import { activeSlash, argumentHint, insertSlash } from '../slashCommands';

export interface ComposerProps {
  busy: boolean;
  /**
   * Why nothing can be sent now (e.g. another window runs the shown task); the box says so and
   * Send is off. Undefined: messages can be sent.
   */
  disabled?: string | undefined;
  hasTask: boolean;
  mode: PermissionMode;
  initialDraft: string;
  /** The latest file search answer for a mention query. */
  mentions: { queryId: number; files: string[] } | null;
  onSend(text: string): void;
  onCancel(): void;
  onMode(mode: PermissionMode): void;
  onDraft(text: string): void;
  onMentionQuery(queryId: number, query: string): void;
  /** The latest slash command answer for a `/` query. */
  commands?: { queryId: number; commands: SlashCommand[] } | null;
  onCommandQuery?(queryId: number, query: string): void;
}

let nextQueryId = 1;

/**
 * The message box: Enter sends, Shift+Enter adds a line; while the task works, Cancel (and Esc)
 * takes Send's place, so the row never wraps in a narrow sidebar;
 * `@` opens a list of workspace files (arrows to move, Enter or Tab to pick, Esc to close); `/`
 * at the start of the message lists slash commands (the prompts of ready MCP servers, with their
 * arguments) the same way; the
 * mode selector sets the permission mode of the next task or message.
 */
export function Composer(p: ComposerProps) {
  const [text, setText] = useState(p.initialDraft);
  const [mention, setMention] = useState<{ start: number; caret: number; queryId: number } | null>(null);
  const [slash, setSlash] = useState<{ caret: number; queryId: number } | null>(null);
  const [active, setActive] = useState(0);
  const ref = useRef<HTMLTextAreaElement>(null);
  const canSend = !p.busy && !p.disabled && text.trim().length > 0;
  const files = mention && p.mentions?.queryId === mention.queryId ? p.mentions.files.slice(0, 12) : [];
  const commands = slash && p.commands?.queryId === slash.queryId ? p.commands.commands.slice(0, 12) : [];
  const slashOpen = slash !== null && commands.length > 0;
  const listOpen = (mention !== null && files.length > 0) || slashOpen;
  const count = slashOpen ? commands.length : files.length;

  useEffect(() => setActive(0), [p.mentions, p.commands]);

  const update = (value: string, caret: number) => {
    setText(value);
    p.onDraft(value);
    const s = p.onCommandQuery ? activeSlash(value, caret) : undefined;
    if (s) {
      const queryId = nextQueryId++;
      setSlash({ caret, queryId });
      setMention(null);
      p.onCommandQuery?.(queryId, s.query);
      return;
    }
    setSlash(null);
    const m = activeMention(value, caret);
    if (!m) {
      setMention(null);
      return;
    }
    const queryId = nextQueryId++;
    setMention({ start: m.start, caret, queryId });
    p.onMentionQuery(queryId, m.query);
  };

  const pick = (path: string) => {
    if (!mention) return;
    const next = insertMention(text, mention.start, mention.caret, path);
    setText(next.text);
    p.onDraft(next.text);
    setMention(null);
    requestAnimationFrame(() => {
      ref.current?.focus();
      ref.current?.setSelectionRange(next.caret, next.caret);
    });
  };

  const pickCommand = (name: string) => {
    if (!slash) return;
    const next = insertSlash(text, slash.caret, name);
    setText(next.text);
    p.onDraft(next.text);
    setSlash(null);
    requestAnimationFrame(() => {
      ref.current?.focus();
      ref.current?.setSelectionRange(next.caret, next.caret);
    });
  };

  const send = () => {
    if (!canSend) return;
    p.onSend(text);
    setText('');
    p.onDraft('');
    setMention(null);
    setSlash(null);
    ref.current?.focus();
  };

  const onKeyDown = (e: KeyboardEvent) => {
    if (listOpen) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        setActive((a) => (a + (e.key === 'ArrowDown' ? 1 : count - 1)) % count);
        return;
      }
      if ((e.key === 'Enter' || e.key === 'Tab') && !e.shiftKey) {
        e.preventDefault();
        if (slashOpen) {
          const c = commands[active];
          if (c) pickCommand(c.name);
          return;
        }
        const f = files[active];
        if (f) pick(f);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        setMention(null);
        setSlash(null);
        return;
      }
    }
    if (e.key === 'Escape' && p.busy) {
      e.preventDefault();
      p.onCancel();
      return;
    }
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
      {slashOpen && (
        <ul class="keel-mentions" role="listbox" id="keel-mention-list" aria-label="Slash commands" data-testid="command-list">
          {commands.map((c, i) => (
            <li
              key={c.name}
              id={`keel-mention-${i}`}
              role="option"
              aria-selected={i === active ? 'true' : 'false'}
              class={i === active ? 'keel-mention keel-mention-active' : 'keel-mention'}
              data-testid="command-option"
              title={c.description}
              onMouseDown={(e) => {
                e.preventDefault();
                pickCommand(c.name);
              }}
            >
              <span class="codicon codicon-symbol-event" aria-hidden="true" /> /{c.name}
              {(c.hint ?? (c.arguments.length > 0 ? argumentHint(c.arguments) : '')) && <span class="keel-note"> {c.hint ?? argumentHint(c.arguments)}</span>}
              {c.description && <span class="keel-note"> — {c.description}</span>}
              {c.source && <span class="keel-note"> ({c.source})</span>}
            </li>
          ))}
        </ul>
      )}
      {listOpen && !slashOpen && (
        <ul class="keel-mentions" role="listbox" id="keel-mention-list" aria-label="Workspace files" data-testid="mention-list">
          {files.map((f, i) => (
            <li
              key={f}
              id={`keel-mention-${i}`}
              role="option"
              aria-selected={i === active ? 'true' : 'false'}
              class={i === active ? 'keel-mention keel-mention-active' : 'keel-mention'}
              data-testid="mention-option"
              onMouseDown={(e) => {
                e.preventDefault();
                pick(f);
              }}
            >
              <span class="codicon codicon-file" aria-hidden="true" /> {f}
            </li>
          ))}
        </ul>
      )}
      <textarea
        ref={ref}
        class="keel-input"
        data-testid="prompt-input"
        aria-label="Message Keel"
        aria-autocomplete="list"
        aria-expanded={listOpen ? 'true' : 'false'}
        aria-controls={listOpen ? 'keel-mention-list' : undefined}
        aria-activedescendant={listOpen ? `keel-mention-${active}` : undefined}
        placeholder={p.disabled ?? hasTaskPlaceholder(p.hasTask)}
        disabled={p.disabled !== undefined}
        title={p.disabled}
        rows={3}
        value={text}
        onInput={(e) => update(e.currentTarget.value, e.currentTarget.selectionStart ?? e.currentTarget.value.length)}
        onKeyDown={onKeyDown}
      />
      <div class="keel-composer-actions">
        <label class="keel-mode">
          <span class="codicon codicon-shield" aria-hidden="true" />
          <select
            class="keel-select"
            data-testid="mode-select"
            aria-label="Permission mode for the next message"
            value={p.mode}
            onChange={(e) => p.onMode(e.currentTarget.value as PermissionMode)}
          >
            {[...SELECTABLE_MODES, ...((SELECTABLE_MODES as readonly PermissionMode[]).includes(p.mode) ? [] : [p.mode])].map((m) => (
              <option key={m} value={m}>
                {PERMISSION_MODE_INFO[m].label}
              </option>
            ))}
          </select>
        </label>
        <span class="keel-spacer" />
        {/* One slot, as in Claude Code: Cancel takes Send's place while the task works (Send could not be used then). */}
        {p.busy ? (
          <button type="button" class="keel-button keel-button-secondary" data-testid="cancel" onClick={p.onCancel} title="Cancel (Esc)">
            <span class="codicon codicon-debug-stop" aria-hidden="true" /> Cancel
          </button>
        ) : (
          <button type="submit" class="keel-button" data-testid="send" disabled={!canSend} aria-label="Send" title={p.disabled ?? 'Send (Enter)'}>
            <span class="codicon codicon-send" aria-hidden="true" /> Send
          </button>
        )}
      </div>
    </form>
  );
}

function hasTaskPlaceholder(hasTask: boolean): string {
  return hasTask ? 'Reply to Keel — @ to mention a file, Enter to send, Shift+Enter for a new line' : 'Ask Keel to do something — @ to mention a file, Enter to send';
}
