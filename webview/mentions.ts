import { findMentions, mentionLabel, removeMention, type Mention, type MentionToken } from '../src/shared/domain/mentions';

/** The `@` mention being typed just before the caret, if any: its start index and query. Pure. */
export function activeMention(text: string, caret: number): { start: number; query: string } | undefined {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\s@"]*)$/.exec(before);
  if (!m) return undefined;
  const query = m[2] ?? '';
  return { start: caret - query.length - 1, query };
}

/**
 * `text` with the mention being typed (from `start` to `caret`) replaced by `@insert` and a
 * space — none when `partial` (the person goes on typing it, e.g. `https://`); returns the new
 * caret too. Pure.
 */
export function insertMention(text: string, start: number, caret: number, insert: string, partial = false): { text: string; caret: number } {
  const inserted = `@${insert}${partial ? '' : ' '}`;
  return { text: text.slice(0, start) + inserted + text.slice(caret), caret: start + inserted.length };
}

/** One chip of the composer: a mention of the text, and how it reads. */
export interface ComposerChip {
  key: string;
  token: MentionToken;
  label: string;
  icon: string;
}

/** The chips of the composer's text: one per mention, in order (a mention written twice, once). Pure. */
export function composerChips(text: string): ComposerChip[] {
  const seen = new Set<string>();
  const out: ComposerChip[] = [];
  for (const token of findMentions(text)) {
    const label = mentionLabel(token.mention);
    if (seen.has(label)) continue;
    seen.add(label);
    out.push({ key: `${token.start}:${token.raw}`, token, label, icon: iconOfMention(token.mention) });
  }
  return out;
}

/** `text` without every writing of the chip's mention (removing a chip removes what it stands for). Pure. */
export function withoutChip(text: string, chip: ComposerChip): string {
  let out = text;
  // From the end, so earlier positions stay valid.
  for (const t of findMentions(text).reverse()) if (mentionLabel(t.mention) === chip.label) out = removeMention(out, t);
  return out;
}

/** The codicon of a kind of mention or attachment. */
export function iconOfKind(kind: string): string {
  switch (kind) {
    case 'folder':
      return 'codicon-folder';
    case 'problems':
      return 'codicon-warning';
    case 'terminal':
      return 'codicon-terminal';
    case 'git':
      return 'codicon-source-control';
    case 'url':
      return 'codicon-globe';
    case 'resource':
      return 'codicon-database';
    default:
      return 'codicon-file';
  }
}

function iconOfMention(m: Mention): string {
  return iconOfKind(m.kind === 'file' && m.path.endsWith('/') ? 'folder' : m.kind);
}
