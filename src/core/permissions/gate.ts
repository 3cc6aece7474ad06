import { isAbsolute, relative, resolve } from 'node:path';
import type { PermissionMode } from '../runtime/types';
import type { PermissionSubject } from '../tools/types';

/**
 * The permission interface the turn machine calls for every tool call. This first engine decides
 * by mode alone (the full rule engine with the shell parser replaces `decide` behind the same
 * interface). "ask" goes to a `PermissionAsker`: the extension shows a prompt; headless, the CLI's
 * asker denies.
 */
export type ModeDecision = { decision: 'allow' | 'deny' | 'ask'; reason: string };

export interface PermissionRequest {
  requestId: string;
  taskId: string;
  toolCallId: string;
  tool: string;
  input: unknown;
  subject: PermissionSubject;
  reason: string;
  /** The rule that made it ask, if one did (e.g. `Bash(git push:*)` in an ask list). */
  rule?: string;
  /** Unparseable, sudo, writes outside the workspace, network tools: hosts show a modal too. */
  risky?: boolean;
  /** What "Always allow" would save, most specific first; hosts let the user edit it. */
  suggestedRules?: string[];
}

export type PermissionAnswer = {
  decision: 'allow' | 'deny';
  feedback?: string;
  /** Set when the user chose "Always allow": the rules the host saved, and where. */
  always?: { rules: string[]; where: 'project' | 'local' | 'user' };
};

export interface PermissionAsker {
  /** Resolves with the user's answer; rejects or resolves deny when `signal` aborts. */
  ask(request: PermissionRequest, signal: AbortSignal): Promise<PermissionAnswer>;
}

/** Headless: nobody to ask, so what would ask is denied (documented in docs/cli.md). */
export const denyingAsker: PermissionAsker = {
  async ask() {
    return { decision: 'deny', feedback: 'No one is available to approve this (headless run); choose a mode that allows it, e.g. --mode acceptEdits or bypassPermissions.' };
  },
};

function insideWorkspace(workspace: string, path: string): boolean {
  const rel = relative(resolve(workspace), resolve(workspace, path));
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

/** Mode-only decision for one subject. Pure. */
export function decideByMode(mode: PermissionMode, subject: PermissionSubject, readOnly: boolean, workspace: string): ModeDecision {
  const ask = (reason: string): ModeDecision => (mode === 'dontAsk' ? { decision: 'deny', reason: `${reason} (dontAsk mode denies what would ask)` } : { decision: 'ask', reason });
  if (mode === 'bypassPermissions') return { decision: 'allow', reason: 'bypassPermissions mode' };
  if (mode === 'plan' && !readOnly) return { decision: 'deny', reason: 'plan mode allows read-only tools only' };
  switch (subject.kind) {
    case 'read':
      return subject.paths.every((p) => insideWorkspace(workspace, p)) ? { decision: 'allow', reason: 'reading inside the workspace' } : ask('reading outside the workspace');
    case 'write':
      if (mode === 'acceptEdits' && subject.paths.every((p) => insideWorkspace(workspace, p))) return { decision: 'allow', reason: 'acceptEdits mode: edit inside the workspace' };
      return ask(subject.paths.every((p) => insideWorkspace(workspace, p)) ? 'editing a file' : 'writing outside the workspace');
    case 'execute':
      return ask('running a command');
    case 'network':
      return ask('fetching from the network');
    case 'task':
      return { decision: 'allow', reason: 'a subtask asks for its own permissions' };
    case 'mcp':
      return ask('calling an MCP tool');
  }
}
