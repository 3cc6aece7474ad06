/**
 * How much each kind of mention may bring (characters the model reads). A mention past its limit
 * is cut and the attachment says where and how to get the rest; the whole message's attachments
 * share one budget, so twenty mentions cannot flood the context window.
 */
export interface MentionLimits {
  /** Lines of one file (or one line range). */
  fileLines: number;
  /** Characters of one file's attachment. */
  fileChars: number;
  /** Bytes read of one file at most (a larger file's first part is used). */
  fileBytes: number;
  /** Entries of one folder's listing. */
  folderEntries: number;
  /** How deep a folder's listing goes (1: its own entries only). */
  folderDepth: number;
  /** Diagnostics of one `@problems`. */
  problems: number;
  /** Characters of the terminal's text (its end is kept). */
  terminalChars: number;
  /** Characters of the working tree's diff. */
  gitChars: number;
  /** Characters of a fetched page. */
  urlChars: number;
  /** Characters of all of one message's attachments together. */
  totalChars: number;
}

export const MENTION_LIMITS: MentionLimits = {
  fileLines: 2000,
  fileChars: 60_000,
  fileBytes: 4 * 1024 * 1024,
  folderEntries: 200,
  folderDepth: 3,
  problems: 100,
  terminalChars: 20_000,
  gitChars: 60_000,
  urlChars: 40_000,
  totalChars: 150_000,
};

/** `12,345` (how the notes write counts). */
export function count(n: number): string {
  return n.toLocaleString('en-US');
}
