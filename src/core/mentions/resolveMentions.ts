import { relative, resolve } from 'node:path';
import type { AttachmentKind, MessageAttachment } from '../../shared/domain/attachments';
import { findMentions, MAX_MENTIONS, mentionKey, mentionLabel, type Mention } from '../../shared/domain/mentions';
import type { PermissionMode } from '../../shared/domain/permissionModes';
import { LockManager } from '../locks/lockManager';
import type { PermissionDecider } from '../runtime/permissionCheck';
import { createWebFetchTool } from '../tools/webFetch';
import type { ToolResult } from '../tools/types';
import { listFolderMention, locate, readFileMention } from './files';
import { gitChanges, type GitResult } from './git';
import { count, MENTION_LIMITS, type MentionLimits } from './limits';
import { formatProblems, formatTerminal, type ProblemEntry, type TerminalCapture } from './reports';

/**
 * The person's `@` mentions, made into the attachments the model reads after their message. The
 * host resolves them (the webview only sends the text); each attachment is bounded and says what
 * was cut, and what could not be had is an attachment too, saying why (`failed`), so nothing is
 * dropped without a word. Secrets in what comes back are redacted as in tool output.
 *
 * Permissions: a mention is the person's own request, made by typing it, so what would ask is
 * taken as asked and answered; what the person's rules deny stays denied (a denied file is not
 * read, a denied URL is not fetched, denied files are left out of `@git`). Paths stay inside
 * the workspace, links out of it are refused. `@server:uri` (MCP) is left to the MCP part.
 */
export interface MentionContext {
  workspace: string;
  permissions: PermissionDecider;
  mode: PermissionMode;
  redact(text: string): string;
  signal: AbortSignal;
  /** The editor's diagnostics, of one file (workspace-relative) or all; absent: not available here. */
  problems?(path: string | undefined): Promise<ProblemEntry[]>;
  /** The active terminal's selection and last command; null: no terminal is open; absent: not available here. */
  terminal?(): Promise<TerminalCapture | null>;
  /** Fetches a page as WebFetch does (default: the WebFetch tool itself). */
  fetchUrl?(url: string, signal: AbortSignal): Promise<ToolResult>;
  /** The working tree's changes (default: git, gitChanges). */
  git?(workspace: string, signal: AbortSignal, excluded: readonly string[]): Promise<GitResult>;
  limits?: Partial<MentionLimits>;
}

type Resolved = Omit<MessageAttachment, 'label'>;

/** The attachments of `text`'s mentions, in order, each once. Never rejects. */
export async function resolveMentions(text: string, ctx: MentionContext): Promise<MessageAttachment[]> {
  const limits = { ...MENTION_LIMITS, ...ctx.limits };
  const seen = new Set<string>();
  const mentions: Mention[] = [];
  for (const t of findMentions(text)) {
    if (t.mention.kind === 'resource' || seen.has(mentionKey(t.mention))) continue;
    seen.add(mentionKey(t.mention));
    mentions.push(t.mention);
  }
  const out: MessageAttachment[] = [];
  let budget = limits.totalChars;
  for (const [i, m] of mentions.entries()) {
    const label = mentionLabel(m);
    if (i >= MAX_MENTIONS) {
      out.push({ kind: kindOf(m), label, content: '', failed: true, note: `not attached: a message attaches at most ${MAX_MENTIONS} mentions` });
      continue;
    }
    let r: Resolved;
    try {
      r = await resolveOne(m, ctx, limits);
    } catch (err) {
      r = { kind: kindOf(m), content: '', failed: true, note: `it could not be attached: ${(err as Error).message}` };
    }
    let content = r.failed ? '' : ctx.redact(r.content);
    let note = r.note;
    if (content.length > budget) {
      const kept = Math.max(0, budget);
      const part = kept === 0 ? 'none of this one was attached' : `only its first ${count(kept)} of ${count(content.length)} characters were`;
      const cut = `the message's attachments are limited to ${count(limits.totalChars)} characters together, so ${part}`;
      content = content.slice(0, kept);
      note = note ? `${note}; ${cut}` : cut;
    }
    budget -= content.length;
    out.push({ kind: r.kind, label, content, ...(note ? { note } : {}), ...(r.failed ? { failed: true } : {}) });
  }
  return out;
}

function kindOf(m: Mention): AttachmentKind {
  return m.kind === 'resource' ? 'file' : m.kind;
}

async function resolveOne(m: Mention, ctx: MentionContext, limits: MentionLimits): Promise<Resolved> {
  const failed = (kind: AttachmentKind, note: string): Resolved => ({ kind, content: '', failed: true, note });
  switch (m.kind) {
    case 'file': {
      const where = await locate(ctx.workspace, m.path);
      if (!where.ok) return failed('file', `not attached: ${where.why}`);
      const kind = where.isFolder ? 'folder' : 'file';
      const denied = await deniedRead(ctx, where.physical, where.isFolder ? 'Glob' : 'Read');
      if (denied) return failed(kind, `not attached: ${denied}`);
      if (where.isFolder) {
        if (m.range) return failed('folder', 'not attached: it is a folder, and a line range names lines of a file');
        return { kind, ...(await listFolderMention(where.physical, limits)) };
      }
      return { kind, ...(await readFileMention(where.physical, m.range, limits)) };
    }
    case 'problems': {
      if (!ctx.problems) return failed('problems', 'not attached: the editor’s problems are only known inside VS Code');
      const entries = await ctx.problems(m.path);
      return { kind: 'problems', ...formatProblems(entries, m.path, limits) };
    }
    case 'terminal': {
      if (!ctx.terminal) return failed('terminal', 'not attached: terminals are only known inside VS Code');
      const t = await ctx.terminal();
      if (!t) return failed('terminal', 'not attached: no terminal is open');
      const r = formatTerminal(t, limits);
      return 'failed' in r ? failed('terminal', `not attached: ${r.failed}`) : { kind: 'terminal', ...r };
    }
    case 'git':
      return resolveGit(ctx, limits);
    case 'url':
      return resolveUrl(m.url, ctx, limits);
    case 'resource':
      return failed('file', 'not attached here: an MCP resource is read by its server');
  }
}

/** Why the person's rules keep Keel from reading `physical`, or undefined when they do not. */
async function deniedRead(ctx: MentionContext, physical: string, tool: 'Read' | 'Glob'): Promise<string | undefined> {
  const shown = relative(resolve(ctx.workspace), physical) || '.';
  const d = await ctx.permissions.decide(
    { tool, input: tool === 'Read' ? { file_path: physical } : { pattern: '*', path: physical }, subject: { kind: 'read', tool, paths: [physical], summary: `Read ${shown}` }, readOnly: true },
    ctx.mode,
  );
  return d.decision === 'deny' ? `your permission rules deny reading it (${d.reason})` : undefined;
}

async function resolveGit(ctx: MentionContext, limits: MentionLimits): Promise<Resolved> {
  const run = ctx.git ?? gitChanges;
  const first = await run(ctx.workspace, ctx.signal, []);
  if (!first.ok) return { kind: 'git', content: '', failed: true, note: `not attached: ${first.why}` };
  // Files the rules deny reading are left out of the diff (named in the note, never shown).
  const denied: string[] = [];
  for (const p of first.changes.paths) {
    const abs = resolve(ctx.workspace, p);
    if (await deniedRead(ctx, abs, 'Read')) denied.push(p);
  }
  const result = denied.length > 0 ? await run(ctx.workspace, ctx.signal, denied) : first;
  if (!result.ok) return { kind: 'git', content: '', failed: true, note: `not attached: ${result.why}` };
  const { status, diff } = result.changes;
  if (!status.trim() && !diff.trim()) return { kind: 'git', content: 'The working tree has no changes.' };
  const notes: string[] = [];
  if (denied.length > 0) notes.push(`left out, as your permission rules deny reading them: ${denied.join(', ')}`);
  let shownDiff = diff;
  if (diff.length > limits.gitChars) {
    shownDiff = diff.slice(0, limits.gitChars);
    notes.push(`the diff is cut at ${count(limits.gitChars)} of ${count(diff.length)} characters; run git diff on single files for the rest`);
  }
  const content = `git status --short:\n${status.trimEnd()}\n\ngit diff HEAD:\n${shownDiff.trimEnd() || '(no changes to tracked files)'}`;
  return { kind: 'git', content, ...(notes.length ? { note: notes.join('; ') } : {}) };
}

async function resolveUrl(url: string, ctx: MentionContext, limits: MentionLimits): Promise<Resolved> {
  const tool = createWebFetchTool({ maxChars: limits.urlChars });
  const subject = tool.subject({ url }, { workspace: ctx.workspace });
  const d = await ctx.permissions.decide({ tool: 'WebFetch', input: { url }, subject, readOnly: true }, ctx.mode);
  if (d.decision === 'deny') return { kind: 'url', content: '', failed: true, note: `not fetched: your permission rules deny it (${d.reason})` };
  const fetched = ctx.fetchUrl
    ? await ctx.fetchUrl(url, ctx.signal)
    : await tool.invoke(
        { url },
        { taskId: 'mention', workspace: ctx.workspace, signal: ctx.signal, locks: new LockManager(), onOutput: () => undefined, searchExclusions: (root) => ctx.permissions.searchExclusions(root) },
      );
  if (fetched.isError) return { kind: 'url', content: '', failed: true, note: `not fetched: ${fetched.content.split('\n')[0] ?? fetched.summary}` };
  const cut = /\[[^\]]*truncated[^\]]*\]|the page is longer/i.test(fetched.content);
  return { kind: 'url', content: fetched.content, ...(cut ? { note: `the page is cut at ${count(limits.urlChars)} characters` } : {}) };
}
