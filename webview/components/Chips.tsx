import type { AttachmentSummary } from '../../src/shared/domain/attachments';
import type { QueuedMessage } from '../../src/shared/domain/events';
import { iconOfKind, type ComposerChip } from '../mentions';
import { SentImages } from './ComposerImages';

/**
 * The composer's chips: one per `@` mention of the text being written, each removable (its
 * button removes the mention from the text). Buttons, so they are reached with Tab.
 */
export function MentionChips({ chips, onRemove }: { chips: ComposerChip[]; onRemove(chip: ComposerChip): void }) {
  if (chips.length === 0) return null;
  return (
    <ul class="keel-chips" aria-label="Mentioned: attached when the message is sent" data-testid="mention-chips">
      {chips.map((c) => (
        <li key={c.key} class="keel-chip" data-testid="mention-chip" data-kind={c.token.mention.kind} title={c.label}>
          <span class={`codicon ${c.icon}`} aria-hidden="true" />
          <span class="keel-chip-label">{c.label}</span>
          <button type="button" class="keel-chip-remove" aria-label={`Remove ${c.label}`} title={`Remove ${c.label}`} data-testid="mention-chip-remove" onClick={() => onRemove(c)}>
            <span class="codicon codicon-close" aria-hidden="true" />
          </button>
        </li>
      ))}
    </ul>
  );
}

/**
 * What a sent message's mentions brought, under it in the transcript: one chip each, with what
 * was cut or why nothing came (a failed one is marked, and its reason is read out with it).
 */
export function AttachmentChips({ attachments }: { attachments: readonly AttachmentSummary[] }) {
  return (
    <ul class="keel-chips keel-chips-sent" aria-label="Attached" data-testid="attachments">
      {attachments.map((a, i) => (
        <li
          key={`${i}:${a.label}`}
          class={a.failed ? 'keel-chip keel-chip-failed' : a.note ? 'keel-chip keel-chip-cut' : 'keel-chip'}
          data-testid="attachment"
          data-kind={a.kind}
          data-failed={a.failed ? 'true' : 'false'}
          title={a.note ? `${a.label}: ${a.note}` : a.label}
        >
          <span class={`codicon ${a.failed ? 'codicon-error' : iconOfKind(a.kind)}`} aria-hidden="true" />
          <span class="keel-chip-label">{a.label}</span>
          {a.note && <span class="keel-chip-note" data-testid="attachment-note">{a.failed ? ` — ${a.note}` : ' — cut'}</span>}
          {a.note && !a.failed && <span class="keel-visually-hidden">: {a.note}</span>}
        </li>
      ))}
    </ul>
  );
}

/**
 * Messages the person sent while Keel works: pending, each with a cancel button; sent together
 * when the run ends.
 */
export function QueuedMessages({ queued, onWithdraw }: { queued: readonly QueuedMessage[]; onWithdraw(id: string): void }) {
  if (queued.length === 0) return null;
  return (
    <section class="keel-queued" aria-label="Queued messages" data-testid="queued">
      <div class="keel-queued-head keel-note">
        <span class="codicon codicon-clock" aria-hidden="true" />{' '}
        {queued.length === 1 ? 'Queued — sent when Keel finishes this turn' : `${queued.length} queued — sent together when Keel finishes this turn`}
      </div>
      <ol class="keel-queued-list">
        {queued.map((q) => (
          <li key={q.id} class="keel-queued-item" data-testid="queued-message" data-id={q.id}>
            <div class="keel-queued-text keel-pre">{q.typed ?? q.text}</div>
            {q.images && q.images.length > 0 && <SentImages images={q.images} />}
            {q.attachments && q.attachments.length > 0 && <AttachmentChips attachments={q.attachments} />}
            <button
              type="button"
              class="keel-icon-button"
              data-testid="queued-cancel"
              aria-label={`Cancel queued message: ${(q.typed ?? q.text).slice(0, 60)}`}
              title="Cancel this message (it is not sent)"
              onClick={() => onWithdraw(q.id)}
            >
              <span class="codicon codicon-close" aria-hidden="true" />
            </button>
          </li>
        ))}
      </ol>
    </section>
  );
}
