import type { McpReadOutput } from '../machines/mcpConnection/types';
import type { McpServerStatus } from './types';

/**
 * What a person writes about MCP in a prompt, made into what the model reads:
 * - `@server:uri` mentions a resource of a configured server: its contents are read and added
 *   after the prompt (the mention stays in the text, so the model knows where it came from);
 * - a prompt that starts with `/mcp__server__prompt [args…]` is replaced by that server prompt's
 *   messages; the words after it fill the prompt's arguments in order (the last one takes the
 *   rest of the line), or `name=value` words name them.
 * Only names of configured servers count (`@src/a.ts` and `@someone:x` are left alone). What a
 * server returns is untrusted: each resource and the whole expansion are capped at `maxTokens`.
 * Never rejects: a resource or prompt that cannot be had is a note in the text, saying why.
 */
export interface McpReferenceSource {
  status(): McpServerStatus[];
  /** Connects these servers (if they may start), so their prompts' arguments are known. */
  start(only?: readonly string[]): Promise<void>;
  readResource(server: string, uri: string, signal: AbortSignal): Promise<McpReadOutput>;
  getPrompt(server: string, prompt: string, args: Record<string, string>, signal: AbortSignal): Promise<{ ok: true; text: string } | { ok: false; message: string }>;
}

export interface ExpandedPrompt {
  text: string;
  /** One line per reference for the person ("read everything:test://static/resource/1"). */
  notes: string[];
}

const MENTION = /(^|\s)@([A-Za-z0-9_-]+(?:_[A-Za-z0-9-]+)*):(\S+)/g;
const SLASH = /^\/mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__(\S+)(?:[ \t]+([^\n]*))?/;

export async function expandMcpReferences(text: string, source: McpReferenceSource, maxTokens: number, signal: AbortSignal): Promise<ExpandedPrompt> {
  const servers = new Map(source.status().map((s) => [s.name, s]));
  if (servers.size === 0) return { text, notes: [] };
  const notes: string[] = [];
  let body = text;
  const slash = SLASH.exec(text.trimStart());
  if (slash && servers.has(slash[1] as string)) {
    const [whole, server, prompt, rest] = slash as unknown as [string, string, string, string | undefined];
    await source.start([server]);
    const info = source.status().find((s) => s.name === server)?.prompts.find((p) => p.name === prompt);
    const args = promptArguments(info?.arguments.map((a) => a.name) ?? [], rest ?? '');
    const got = await source.getPrompt(server, prompt, args, signal);
    const after = text.trimStart().slice(whole.length).replace(/^\n/, '');
    body = got.ok ? `${got.text}${after ? `\n\n${after}` : ''}` : `${text}\n\n[The MCP prompt ${prompt} of ${server} could not be had: ${got.message}]`;
    notes.push(got.ok ? `prompt ${server}/${prompt}` : `prompt ${server}/${prompt} failed: ${got.message}`);
  }
  const attachments: string[] = [];
  let budget = maxTokens * 4;
  const seen = new Set<string>();
  for (const m of body.matchAll(MENTION)) {
    const server = m[2] as string;
    const uri = trimTrailingPunctuation(m[3] as string);
    const key = `${server}:${uri}`;
    if (!servers.has(server) || seen.has(key)) continue;
    seen.add(key);
    const out = await source.readResource(server, uri, signal);
    if (!out.ok) {
      attachments.push(`[The resource ${uri} of MCP server ${server} could not be read: ${out.message}]`);
      notes.push(`${key} failed: ${out.message}`);
      continue;
    }
    const binary = (c: (typeof out.contents)[number]) => `[binary content${c.mimeType ? ` (${c.mimeType})` : ''}, ${Math.floor(((c.blob ?? '').length * 3) / 4)} bytes, not included]`;
    const parts = out.contents.map((c) => (c.text !== undefined ? c.text : binary(c)));
    let content = parts.join('\n');
    if (content.length > budget) content = `${content.slice(0, Math.max(0, budget))}\n[Truncated: Keel adds at most ${maxTokens} tokens of mentioned resources (MAX_MCP_OUTPUT_TOKENS).]`;
    budget = Math.max(0, budget - content.length);
    attachments.push(`<mcp-resource server="${server}" uri="${escapeAttr(uri)}">\n${content}\n</mcp-resource>`);
    notes.push(`read ${key}`);
  }
  return { text: attachments.length ? `${body}\n\n${attachments.join('\n\n')}` : body, notes };
}

/** Words after a slash command as prompt arguments: `name=value` words by name, the others in order. */
export function promptArguments(names: readonly string[], rest: string): Record<string, string> {
  const out: Record<string, string> = {};
  const words = rest.trim() ? rest.trim().split(/\s+/) : [];
  const positional: string[] = [];
  for (const w of words) {
    const eq = /^([A-Za-z_][\w-]*)=(.*)$/.exec(w);
    if (eq && names.includes(eq[1] as string)) out[eq[1] as string] = eq[2] as string;
    else positional.push(w);
  }
  const free = names.filter((n) => !(n in out));
  free.forEach((name, i) => {
    if (i >= positional.length) return;
    out[name] = i === free.length - 1 ? positional.slice(i).join(' ') : (positional[i] as string);
  });
  return out;
}

function trimTrailingPunctuation(uri: string): string {
  return uri.replace(/[.,;:!?)\]]+$/, '');
}

function escapeAttr(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');
}
