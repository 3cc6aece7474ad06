import { createHash } from 'node:crypto';

/**
 * The one seam through which a workspace's own commands and skills (repository content: the
 * `.claude/` and `.keel/` folders of the workspace) are approved before Keel offers them, runs
 * them or puts their names into a prompt (docs/permissions.md, "Trust"). An item is approved for
 * its id and the digest of its content: a changed file is a new question. The person's own
 * commands and skills (`~/.claude/…`, `~/.keel/…`) need no approval.
 *
 * Its shape is the trust model's view of a workspace's approvals (`approves(item)`), so the
 * workspace trust plugs in as it is.
 */
export interface ProjectContentGate {
  /** True when the person approved this item of the workspace in exactly this form. */
  approves(item: { id: string; fingerprint: string }): boolean;
}

/** A gate that approves nothing: a host without an approval store, or a workspace not trusted. */
export const NOTHING_APPROVED: ProjectContentGate = { approves: () => false };

/** What an approval of a command or skill is for: its kind and path, and its content's digest. */
export interface ContentItem {
  id: string;
  kind: 'command' | 'skill';
  fingerprint: string;
  /** One line, as a list shows it. */
  summary: string;
  /** The file, relative to the workspace. */
  source: string;
}

export function contentDigest(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** The item of a workspace command file (`display`: its path in the workspace). */
export function commandItem(display: string, text: string, name: string): ContentItem {
  return { id: `command:${display}`, kind: 'command', fingerprint: contentDigest(text), summary: `command /${name}`, source: display };
}

/** The item of a workspace skill (`display`: its SKILL.md in the workspace). */
export function skillItem(display: string, text: string, name: string): ContentItem {
  return { id: `skill:${display}`, kind: 'skill', fingerprint: contentDigest(text), summary: `skill ${name}`, source: display };
}
