import { errorMessage } from '../shared/domain/errors';
import { findMentions } from '../shared/domain/mentions';
import type { PermissionMode } from '../shared/domain/permissionModes';
import { isCardImageSrc } from '../shared/domain/toolImages';
import type { MessageAttachment } from '../shared/domain/attachments';
import type { PromptImageMessage } from '../shared/protocol/fromWebview';
import { promptImageFromData, tooManyImages } from '../core/context/promptImages';
import type { AttachedImage } from '../core/machines/task/task.machine';
import { resolveMentions } from '../core/mentions/resolveMentions';
import type { PermissionDecider } from '../core/runtime/permissionCheck';
import type { MessageExtras } from '../core/runtime/types';
import type { EditorMentions, TaskRuntimeLike } from './chatHost';
import type { McpChat } from './mcp/mcpRequests';
import { slashInChat, type ChatCommands, type SlashSurface } from './slashChat';

/** What a chat needs to turn what the person typed into a message. */
export interface ComposerContext {
  /** The window's runtime (loaded on the first need): the rules and secrets mentions obey. */
  runtime(): Promise<TaskRuntimeLike>;
  /** The chat's permission mode now (a mention's read is decided in it). */
  mode(): PermissionMode;
  /** What `@` mentions read from the editor; absent: mentions stay text. */
  mentions?: EditorMentions | undefined;
  /** Slash commands; absent: a `/…` message is sent as typed. */
  commands?: ChatCommands | undefined;
  /** The window's MCP servers (`@server:uri`, `/mcp__…`). */
  mcp?: McpChat | undefined;
  /** What a built-in slash command may do to the chat; its `notice` also says what was wrong. */
  surface: SlashSurface;
  /** An error the chat shows (a mention that could not be read). */
  error(message: string): void;
  /** The chat closed meanwhile: nothing is sent. */
  closed(): boolean;
}

/** The message a task gets, or nothing (a problem was said, a built-in acted, the chat closed). */
export type ComposedMessage = { kind: 'send'; text: string; extras: MessageExtras } | { kind: 'nothing' };

/**
 * What the composer's `prompt` becomes: the one place a typed message is prepared before any
 * task sees it. In this order, which is the contract:
 * 1. the attached images are checked (too many, a wrong one: said, nothing sent);
 * 2. the `@` mentions are resolved from what the person typed, under the tasks' permission rules
 *    in the chat's mode — before a command or an MCP prompt is expanded into the text, so a
 *    command file's or a server's text never makes Keel read or fetch anything;
 * 3. `/name args`: a custom command is expanded (with its allowed-tools and model), a built-in
 *    acts on the chat and nothing is sent;
 * 4. MCP prompts and resources in the text are expanded.
 * When what is sent is not what the person typed, `extras.typed` is what they typed: the chat
 * shows that as their message, with the text sent on demand (the model reads only the text).
 * Rejects only when no runtime can be made for a message with mentions (as a first prompt would).
 */
export async function composeMessage(typed: string, attached: readonly PromptImageMessage[], ctx: ComposerContext): Promise<ComposedMessage> {
  const images = checkedImages(attached);
  if (typeof images === 'string') {
    ctx.surface.notice(`${images}. Nothing was sent.`);
    return { kind: 'nothing' };
  }
  let attachments: MessageAttachment[];
  try {
    attachments = await mentionAttachments(typed, ctx);
  } catch (e) {
    ctx.error(`Keel could not attach what the message mentions: ${errorMessage(e)}`);
    return { kind: 'nothing' };
  }
  const slash = ctx.commands ? await slashInChat(typed, ctx.commands, ctx.surface) : { kind: 'send' as const, text: typed, extras: {} };
  if (slash.kind === 'handled' || ctx.closed()) return { kind: 'nothing' };
  const text = ctx.mcp ? await ctx.mcp.expand(slash.text, new AbortController().signal) : slash.text;
  if (ctx.closed()) return { kind: 'nothing' };
  return {
    kind: 'send',
    text,
    extras: {
      ...slash.extras,
      ...(images.length > 0 ? { images } : {}),
      ...(attachments.length > 0 ? { attachments } : {}),
      ...(text !== typed ? { typed } : {}),
    },
  };
}

/** The images a prompt message carried, checked; or what is wrong with them. */
function checkedImages(attached: readonly PromptImageMessage[]): AttachedImage[] | string {
  const tooMany = tooManyImages(attached.length);
  if (tooMany) return tooMany;
  const out: AttachedImage[] = [];
  for (const a of attached) {
    const r = promptImageFromData(a.name, a.data);
    if (!r.ok) return r.problem;
    // The preview is the composer's: kept only when it is a checked image, else the transcript shows the name.
    const thumbnail = a.thumbnail && isCardImageSrc(a.thumbnail) ? a.thumbnail : undefined;
    out.push(thumbnail ? { ...r.image, info: { ...r.image.info, thumbnail } } : r.image);
  }
  return out;
}

/** The attachments of the `@` mentions in `typed` (src/core/mentions); none without a folder or a mention to read. */
async function mentionAttachments(typed: string, ctx: ComposerContext): Promise<MessageAttachment[]> {
  const editor = ctx.mentions;
  if (!editor || !findMentions(typed).some((t) => t.mention.kind !== 'resource')) return [];
  const runtime = await ctx.runtime();
  return resolveMentions(typed, {
    workspace: editor.workspace,
    // A runtime without a permission engine (none in the product) may read nothing for a mention.
    permissions: runtime.permissions ?? REFUSE_ALL,
    mode: ctx.mode(),
    redact: (t) => runtime.secrets?.redact(t) ?? t,
    signal: new AbortController().signal,
    ...(editor.problems ? { problems: (p: string | undefined) => editor.problems!(p) } : {}),
    ...(editor.terminal ? { terminal: () => editor.terminal!() } : {}),
  });
}

/** Denies every mention's read: what a runtime without a permission engine may resolve. */
const REFUSE_ALL: PermissionDecider = {
  decide: async () => ({ decision: 'deny', reason: 'no permission rules are loaded' }),
  searchExclusions: async () => null,
};
