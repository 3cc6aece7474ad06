import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { PERMISSION_MODE_INFO, SELECTABLE_MODES, type PermissionMode } from '../../src/shared/domain/permissionModes';
import type { QueuedMessage } from '../../src/shared/domain/events';
import type { MentionItem, SlashCommand } from '../../src/shared/protocol/toWebview';
import { activeMention, composerChips, iconOfKind, insertMention, withoutChip } from '../mentions';
import { activeSlash, argumentHint, insertSlash } from '../slashCommands';
import { MentionChips, QueuedMessages } from './Chips';
import { ComposerImages } from './ComposerImages';
import { admitImages, readImage, thumbnailOf, type ComposerImage } from '../images';
import { PROMPT_IMAGE_TYPES } from '../../src/shared/domain/promptImageLimits';

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
  /** The latest answer to a mention query: what can be mentioned. */
  mentions: { queryId: number; items: MentionItem[] } | null;
  /** The message and the images attached to it (checked here; the host checks them again). */
  onSend(text: string, images: { name: string; data: string; thumbnail?: string }[]): void;
  onCancel(): void;
  onMode(mode: PermissionMode): void;
  onDraft(text: string): void;
  onMentionQuery(queryId: number, query: string): void;
  /** The latest slash command answer for a `/` query. */
  commands?: { queryId: number; commands: SlashCommand[] } | null;
  onCommandQuery?(queryId: number, query: string): void;
  /** Text the host puts in the box (a message a rewind went back to); a new `n` replaces the draft. */
  injected?: { text: string; n: number } | null;
  /** The shown task's messages waiting for its run to end. */
  queued?: readonly QueuedMessage[];
  onWithdraw?(id: string): void;
  /** Queued messages given back (the run was cancelled): their text comes back into the box, once per `seq`. */
  returned?: { seq: number; text: string } | null;
  /** Changes when something asks for the box to take the focus (Keel: Focus Chat). */
  focusRequest?: number;
}

let nextQueryId = 1;

/**
 * The message box: Enter sends, Shift+Enter adds a line. While the task works, a message is
 * queued (shown as pending above the box, each with a cancel button) and sent when the run ends;
 * Cancel (and Esc) stops the run and gives queued messages back to the box. `@` opens a list of
 * what can be mentioned (Keel's words, MCP resources, folders, files; arrows to move, Enter or
 * Tab to pick, Esc to close); each mention of the text shows as a chip with a remove button.
 * `/` at the start of the message lists slash commands the same way. The mode selector sets the
 * permission mode of the next task or message. Everything works from the keyboard.
 */
export function Composer(p: ComposerProps) {
  const [text, setText] = useState(p.initialDraft);
  const [mention, setMention] = useState<{ start: number; caret: number; queryId: number } | null>(null);
  const [slash, setSlash] = useState<{ caret: number; queryId: number } | null>(null);
  const [active, setActive] = useState(0);
  const ref = useRef<HTMLTextAreaElement>(null);
  const fileRef = useRef<HTMLInputElement>(null);
  const [images, setImages] = useState<ComposerImage[]>([]);
  const [imageProblems, setImageProblems] = useState<string[]>([]);
  const canSend = !p.disabled && text.trim().length > 0;
  const items = mention && p.mentions?.queryId === mention.queryId ? p.mentions.items.slice(0, 12) : [];
  const commands = slash && p.commands?.queryId === slash.queryId ? p.commands.commands.slice(0, 12) : [];
  const slashOpen = slash !== null && commands.length > 0;
  const listOpen = (mention !== null && items.length > 0) || slashOpen;
  const count = slashOpen ? commands.length : items.length;
  const chips = composerChips(text);

  useEffect(() => setActive(0), [p.mentions, p.commands]);

  // A rewind to before a message gives its text back, to send again or change first.
  const injected = p.injected;
  useEffect(() => {
    if (!injected) return;
    setText(injected.text);
    p.onDraft(injected.text);
    ref.current?.focus();
  }, [injected?.n]);

  const setDraft = (value: string) => {
    setText(value);
    p.onDraft(value);
  };

  // Where the caret goes once the text just set is in the box. Placed right after that render (a
  // layout effect), never on a later frame: a person typing on after Enter picked a command or a
  // mention would otherwise have the caret jump back mid-word and their next keys land before
  // what they had just typed (a deferred frame comes late on a busy machine).
  const pendingCaret = useRef<number | null>(null);
  const [caretTick, setCaretTick] = useState(0);
  useLayoutEffect(() => {
    const caret = pendingCaret.current;
    if (caret === null) return;
    pendingCaret.current = null;
    ref.current?.focus();
    ref.current?.setSelectionRange(caret, caret);
  }, [caretTick]);
  const focusAt = (caret: number) => {
    pendingCaret.current = caret;
    setCaretTick((n) => n + 1);
  };

  // Queued messages given back by a cancel come back into the box, before what is being written.
  const lastReturned = useRef(p.returned?.seq ?? 0);
  useEffect(() => {
    if (!p.returned || p.returned.seq === lastReturned.current) return;
    lastReturned.current = p.returned.seq;
    const back = p.returned.text;
    setText((current) => {
      const next = current.trim() ? `${back}\n${current}` : back;
      p.onDraft(next);
      return next;
    });
    focusAt(back.length);
  }, [p.returned]);

  useEffect(() => {
    if (p.focusRequest) ref.current?.focus();
  }, [p.focusRequest]);

  const update = (value: string, caret: number) => {
    setDraft(value);
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

  const pick = (item: MentionItem) => {
    if (!mention) return;
    const next = insertMention(text, mention.start, mention.caret, item.insert, item.partial);
    setDraft(next.text);
    setMention(null);
    focusAt(next.caret);
  };

  const pickCommand = (name: string) => {
    if (!slash) return;
    const next = insertSlash(text, slash.caret, name);
    setDraft(next.text);
    setSlash(null);
    focusAt(next.caret);
  };

  /** Pasted, dropped or picked files: the images that may join are read; the others are said. */
  const addFiles = async (files: File[]) => {
    if (files.length === 0) return;
    const { admitted, problems } = admitImages(images.length, files);
    const read = await Promise.all(admitted.map((f) => readImage(f).then((i) => i, () => f.name || 'the pasted image')));
    setImageProblems([...problems, ...read.filter((r): r is string => typeof r === 'string').map((n) => `${n} could not be read`)]);
    const added = read.filter((r): r is ComposerImage => typeof r !== 'string');
    setImages((cur) => [...cur, ...added]);
    for (const img of added) {
      void thumbnailOf(img.url).then(
        (thumbnail) => thumbnail && setImages((cur) => cur.map((i) => (i.id === img.id ? { ...i, thumbnail } : i))),
        () => undefined,
      );
    }
  };

  const send = () => {
    if (!canSend) return;
    p.onSend(
      text,
      images.map((i) => ({ name: i.name, data: i.data, ...(i.thumbnail ? { thumbnail: i.thumbnail } : {}) })),
    );
    setImages([]);
    setImageProblems([]);
    setDraft('');
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
        const item = items[active];
        if (item) pick(item);
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
      onDragOver={(e) => {
        if (e.dataTransfer?.types.includes('Files')) e.preventDefault();
      }}
      onDrop={(e) => {
        const files = [...(e.dataTransfer?.files ?? [])];
        if (files.length === 0) return;
        e.preventDefault();
        void addFiles(files);
      }}
    >
      {p.queued && p.onWithdraw && <QueuedMessages queued={p.queued} onWithdraw={p.onWithdraw} />}
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
        <ul class="keel-mentions" role="listbox" id="keel-mention-list" aria-label="What you can mention" data-testid="mention-list">
          {items.map((item, i) => (
            <li
              key={`${item.kind}:${item.insert}`}
              id={`keel-mention-${i}`}
              role="option"
              aria-selected={i === active ? 'true' : 'false'}
              class={i === active ? 'keel-mention keel-mention-active' : 'keel-mention'}
              data-testid="mention-option"
              data-kind={item.kind}
              title={item.detail ?? item.label}
              onMouseDown={(e) => {
                e.preventDefault();
                pick(item);
              }}
            >
              <span class={`codicon ${iconOfKind(item.kind)}`} aria-hidden="true" /> {item.label}
              {item.detail && <span class="keel-note"> — {item.detail}</span>}
            </li>
          ))}
        </ul>
      )}
      <ComposerImages images={images} problems={imageProblems} onRemove={(id) => setImages((cur) => cur.filter((i) => i.id !== id))} />
      <MentionChips
        chips={chips}
        onRemove={(chip) => {
          setDraft(withoutChip(text, chip));
          ref.current?.focus();
        }}
      />
      <textarea
        ref={ref}
        class="keel-input"
        data-testid="prompt-input"
        aria-label="Message Keel"
        aria-autocomplete="list"
        aria-expanded={listOpen ? 'true' : 'false'}
        aria-controls={listOpen ? 'keel-mention-list' : undefined}
        aria-activedescendant={listOpen ? `keel-mention-${active}` : undefined}
        placeholder={p.disabled ?? placeholder(p.hasTask, p.busy)}
        disabled={p.disabled !== undefined}
        title={p.disabled}
        rows={3}
        value={text}
        onInput={(e) => update(e.currentTarget.value, e.currentTarget.selectionStart ?? e.currentTarget.value.length)}
        onKeyDown={onKeyDown}
        onPaste={(e) => {
          // A pasted image joins the message; pasted text stays the textarea's.
          const files = [...(e.clipboardData?.files ?? [])];
          if (files.length === 0) return;
          e.preventDefault();
          void addFiles(files);
        }}
      />
      <input
        ref={fileRef}
        type="file"
        class="keel-visually-hidden"
        tabIndex={-1}
        aria-hidden="true"
        accept={PROMPT_IMAGE_TYPES.join(',')}
        multiple
        data-testid="image-file"
        onChange={(e) => {
          const files = [...(e.currentTarget.files ?? [])];
          e.currentTarget.value = '';
          void addFiles(files);
        }}
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
        <button
          type="button"
          class="keel-icon-button"
          data-testid="attach-image"
          aria-label="Attach images (PNG, JPEG, GIF or WebP; you can also paste or drop them)"
          title="Attach images (PNG, JPEG, GIF or WebP; paste or drop works too)"
          onClick={() => fileRef.current?.click()}
        >
          <span class="codicon codicon-file-media" aria-hidden="true" />
        </button>
        <span class="keel-spacer" />
        {p.busy && (
          <button type="button" class="keel-button keel-button-secondary" data-testid="cancel" onClick={p.onCancel} title="Cancel (Esc)">
            <span class="codicon codicon-debug-stop" aria-hidden="true" /> Cancel
          </button>
        )}
        {/* While the task works, Send queues the message for when the run ends. */}
        {(!p.busy || canSend) && (
          <button
            type="submit"
            class="keel-button"
            data-testid="send"
            disabled={!canSend}
            aria-label={p.busy ? 'Queue' : 'Send'}
            title={p.disabled ?? (p.busy ? 'Queue: sent when Keel finishes this turn (Enter)' : 'Send (Enter)')}
          >
            <span class={`codicon ${p.busy ? 'codicon-clock' : 'codicon-send'}`} aria-hidden="true" /> {p.busy ? 'Queue' : 'Send'}
          </button>
        )}
      </div>
    </form>
  );
}

function placeholder(hasTask: boolean, busy: boolean): string {
  if (busy) return 'Keel is working — a message now is queued and sent when this turn ends';
  return hasTask
    ? 'Reply to Keel — @ to mention files, problems, terminal, git or a URL; Enter to send'
    : 'Ask Keel to do something — @ to mention files, problems, terminal, git or a URL; Enter to send';
}
