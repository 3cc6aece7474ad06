/**
 * What a person's message brings besides its text: the attachments its `@` mentions were resolved
 * into (domain/mentions.ts). The host resolves them (src/core/mentions); the model reads each as
 * a block after the message's text; people see a chip per attachment, with what was cut.
 */

export const ATTACHMENT_KINDS = ['file', 'folder', 'problems', 'terminal', 'git', 'url'] as const;
export type AttachmentKind = (typeof ATTACHMENT_KINDS)[number];

/** What a view shows of an attachment (never its content). */
export interface AttachmentSummary {
  kind: AttachmentKind;
  /** What it is, as on the composer's chip: `src/a.ts:10-20`, `problems`, a URL. */
  label: string;
  /** What was cut, or why nothing came ("not found", "denied by your rules"); absent: all of it. */
  note?: string;
  /** Nothing came of it (not found, refused, failed): the model is told why instead. */
  failed?: boolean;
}

/** An attachment as the model gets it: the summary and the text it reads. */
export interface MessageAttachment extends AttachmentSummary {
  /** What the model reads (already bounded, secrets redacted). */
  content: string;
}

/** The summary of an attachment (what views and the log's `user_message` keep). Pure. */
export function summaryOf(a: MessageAttachment): AttachmentSummary {
  return { kind: a.kind, label: a.label, ...(a.note ? { note: a.note } : {}), ...(a.failed ? { failed: true } : {}) };
}

/**
 * The text block the model reads for `a`: a tagged block naming what it is, with Keel's note on
 * what was cut. The content came from files, terminals and web pages: a closing tag inside it is
 * defused so it cannot end the block early and pass for the person's own words. Pure.
 */
export function attachmentText(a: MessageAttachment): string {
  const body = a.content.replace(/<\/(attachment)/gi, '<\\/$1');
  const note = a.note ? `\n[Keel: ${a.note}]` : '';
  return `<attachment kind="${a.kind}" name="${escapeAttribute(a.label)}">\n${body}${note}\n</attachment>`;
}

/**
 * The attachment whose `attachmentText` is `text`, given its summary (a log keeps the summary in
 * `user_message` and the text in the conversation): what a replay sends again. Undefined when
 * `text` is not such a block. Exact unless the content itself held the defused closing tag. Pure.
 */
export function attachmentFromText(summary: AttachmentSummary, text: string): MessageAttachment | undefined {
  const head = /^<attachment kind="[a-z]+" name="[^"]*">\n/.exec(text)?.[0];
  const tail = `${summary.note ? `\n[Keel: ${summary.note}]` : ''}\n</attachment>`;
  if (!head || !text.endsWith(tail) || text.length < head.length + tail.length) return undefined;
  const content = text.slice(head.length, text.length - tail.length).replace(/<\\\/(attachment)/gi, '</$1');
  return { ...summary, content };
}

function escapeAttribute(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/\n/g, ' ');
}

/** An image the person attached to a message, as views and logs name it (its data is in the conversation). */
export interface AttachedImageInfo {
  name: string;
  mediaType: string;
  bytes: number;
  /** A small preview (a checked image `data:` URL, at most MAX_THUMBNAIL_CHARS) the composer made; absent for `--image` files. */
  thumbnail?: string;
}
