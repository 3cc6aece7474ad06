import type { ToolResultBlock, ToolUseBlock } from '../../shared/domain/messages';
import type { PermissionAsker } from '../permissions/gate';
import type { PermissionMode } from '../runtime/types';
import type { HookFirer } from './execute';
import type { PromptHookModel } from './promptHook';
import { EMPTY_OUTCOME, type HookCommonInput, type HookInput, type HookOutcome } from './types';
import { errorMessage } from '../../shared/domain/errors';

/** A HookInput without the fields every event carries (the task fills those in). */
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/* A sub-agent's agent_id and agent_type are common fields too: the task fills them in. */
export type HookEventBody = DistributiveOmit<HookInput, keyof HookCommonInput>;

/** How many times in a row a Stop hook may send the agent back to work within one run. */
export const MAX_STOP_CONTINUATIONS = 3;

export interface TaskHookIdentity {
  taskId: string;
  /** The root task's id (`session_id`); differs from `taskId` for a sub-agent. */
  sessionId: string;
  workspace: string;
  /** The task's event log, or '' when it is not recorded. */
  transcriptPath: string;
  mode(): PermissionMode;
  /** A hook asked Keel to stop (`"continue": false`): the task is cancelled, `reason` shown to the person. */
  requestStop(reason: string): void;
  /** Where what the person must see goes (hook errors, `systemMessage`s, a bounded Stop hook). */
  log(level: 'info' | 'warn' | 'error', message: string): void;
  /** The model this task's prompt hooks ask (its provider, budget and cost: promptModel.ts). */
  promptModel?: PromptHookModel;
}

/**
 * The hook points of one task (docs/hooks.md): builds each event's JSON with Claude Code's field
 * names and turns the merged outcome into what the task does next. One instance per live task;
 * the runtime calls it at the matching states of the task and turn machines. Every method
 * resolves (never rejects): a hook that fails is a visible, non-blocking error.
 */
export class TaskHookPoints {
  private sessionStarted = false;
  /** Context for the model from SessionStart and UserPromptSubmit hooks, for the current run. */
  private runContext: string[] = [];
  private sessionContext: string[] = [];
  /** PreToolUse context waiting for its call's result. */
  private readonly callContext = new Map<string, string[]>();

  constructor(
    private readonly runner: HookFirer,
    private readonly id: TaskHookIdentity,
  ) {}

  get isSubagent(): boolean {
    return this.id.sessionId !== this.id.taskId;
  }

  /** Fires one event with this task's common fields; reports the outcome's messages to the person. */
  async fire(body: HookEventBody | { hook_event_name: 'SubagentStart'; agent_id: string; agent_type: string }, signal?: AbortSignal): Promise<HookOutcome> {
    // SubagentStart names the sub-agent that starts (its own agent_id), not this task.
    const input = { ...this.common(), ...body } as HookInput;
    let outcome: HookOutcome;
    try {
      outcome = await this.runner.fire(input, signal, this.id.promptModel);
    } catch (err) {
      this.id.log('warn', `hooks: ${errorMessage(err)}`);
      return EMPTY_OUTCOME;
    }
    for (const m of outcome.systemMessages) this.id.log('warn', `${input.hook_event_name} hook: ${m}`);
    for (const e of outcome.errors) this.id.log('warn', e);
    return outcome;
  }

  /** SessionStart, once per live task ("startup" for a new task, "resume" for a stored one). */
  async sessionStart(source: 'startup' | 'resume', model: string): Promise<void> {
    if (this.sessionStarted) return;
    this.sessionStarted = true;
    const o = await this.fire({ hook_event_name: 'SessionStart', source, model });
    this.sessionContext = o.additionalContext;
  }

  /**
   * UserPromptSubmit, before the run that answers `prompt` is prepared. Returns the reason when a
   * hook blocks the prompt (the prompt is then not sent to the model). Its context is kept for
   * the run (`contextForRun`).
   */
  async userPromptSubmit(prompt: string): Promise<{ blocked: string } | null> {
    this.runContext = [];
    const o = await this.fire({ hook_event_name: 'UserPromptSubmit', prompt });
    if (o.stop) return { blocked: o.stop.reason };
    if (o.block) return { blocked: o.block.reason };
    this.runContext = o.additionalContext;
    return null;
  }

  /** System-prompt parts for the run being prepared: what SessionStart and UserPromptSubmit hooks added. */
  contextForRun(): string[] {
    const all = [...this.sessionContext, ...this.runContext];
    return all.length === 0 ? [] : [`Context added by hooks (configured by the person or their project):\n${all.join('\n\n')}`];
  }

  /** PreToolUse for one call, before the permission rules. Its context is kept for the call's result. */
  async preToolUse(call: ToolUseBlock, signal: AbortSignal): Promise<HookOutcome> {
    const o = await this.fire({ hook_event_name: 'PreToolUse', tool_name: call.name, tool_input: call.input, tool_use_id: call.id }, signal);
    if (o.stop) this.id.requestStop(o.stop.reason);
    if (o.additionalContext.length > 0) this.callContext.set(call.id, o.additionalContext);
    return o;
  }

  /**
   * PostToolUse after a call ran. Returns the result the model gets: the tool's own, followed by
   * what hooks fed back (a `decision: "block"` reason, exit-2 stderr, `additionalContext`) and any
   * PreToolUse context of the call.
   */
  async postToolUse(call: ToolUseBlock, result: ToolResultBlock, durationMs: number, signal: AbortSignal): Promise<ToolResultBlock> {
    // A call that failed is PostToolUseFailure's, as in Claude Code (PostToolUse is for calls that worked).
    const o = result.is_error
      ? await this.fire(
          {
            hook_event_name: 'PostToolUseFailure',
            tool_name: call.name,
            tool_input: call.input,
            tool_use_id: call.id,
            error: resultText(result),
            ...(signal.aborted ? { is_interrupt: true } : {}),
          },
          signal,
        )
      : await this.fire(
      {
        hook_event_name: 'PostToolUse',
        tool_name: call.name,
        tool_input: call.input,
        tool_response: { content: result.content, is_error: Boolean(result.is_error) },
        tool_use_id: call.id,
        duration_ms: durationMs,
      },
      signal,
    );
    if (o.stop) this.id.requestStop(o.stop.reason);
    const notes = [...this.takeCallContext(call.id), ...(o.block ? [o.block.reason] : []), ...o.additionalContext];
    return withNotes(result, notes);
  }

  /** What a call's PreToolUse hooks added, when the call did not run (it is appended to the refusal). */
  takeCallContext(toolUseId: string): string[] {
    const c = this.callContext.get(toolUseId) ?? [];
    this.callContext.delete(toolUseId);
    return c;
  }

  /**
   * Stop (SubagentStop in a sub-agent) when the model finished answering. Returns the reason to
   * send the agent back to work with, or null to let it stop. `continuations` is how many times
   * this run was already sent back: `stop_hook_active` is true from the first, and past
   * MAX_STOP_CONTINUATIONS Keel stops anyway and says so.
   */
  async stop(lastAssistantMessage: string, continuations: number): Promise<string | null> {
    const active = continuations > 0;
    const o = this.isSubagent
      ? await this.fire({ hook_event_name: 'SubagentStop', stop_hook_active: active, last_assistant_message: lastAssistantMessage })
      : await this.fire({ hook_event_name: 'Stop', stop_hook_active: active, last_assistant_message: lastAssistantMessage });
    if (o.stop || !o.block) return null;
    if (continuations >= MAX_STOP_CONTINUATIONS) {
      this.id.log('warn', `a Stop hook sent the agent back to work ${continuations} times in a row; Keel stopped anyway (its last reason: ${o.block.reason})`);
      return null;
    }
    return o.block.reason;
  }

  /** PreCompact before the conversation is summarised (cannot be blocked). */
  async preCompact(trigger: 'manual' | 'auto'): Promise<void> {
    await this.fire({ hook_event_name: 'PreCompact', trigger, custom_instructions: '' });
  }

  /** PostCompact once the conversation was summarised, with the summary (cannot change it). */
  async postCompact(trigger: 'manual' | 'auto', summary: string): Promise<void> {
    await this.fire({ hook_event_name: 'PostCompact', trigger, compact_summary: summary });
  }

  /** SubagentStart when a Task call's sub-agent is about to start (observed; fire and forget). */
  subagentStart(agentId: string): void {
    void this.fire({ hook_event_name: 'SubagentStart', agent_id: agentId, agent_type: 'Task' });
  }

  /** InstructionsLoaded for each instructions file a run read into its context (observed; fire and forget). */
  instructionsLoaded(files: readonly { path: string; scope: 'user' | 'workspace'; importedBy?: string | undefined }[], parentPath: (display: string) => string | undefined): void {
    for (const f of files) {
      const parent = f.importedBy !== undefined ? parentPath(f.importedBy) : undefined;
      void this.fire({
        hook_event_name: 'InstructionsLoaded',
        file_path: f.path,
        memory_type: f.scope === 'user' ? 'User' : 'Project',
        load_reason: f.importedBy !== undefined ? 'include' : 'session_start',
        ...(parent ? { parent_file_path: parent } : {}),
      });
    }
  }

  /** SessionEnd when the task is let go (the window or the run ends). Fire and forget. */
  sessionEnd(): void {
    if (!this.sessionStarted) return;
    // Once per session: the task's owner may let it go more than once.
    this.sessionStarted = false;
    void this.fire({ hook_event_name: 'SessionEnd', reason: 'other' });
  }

  /**
   * The person is about to be asked: PermissionRequest hooks may answer for them (allow or deny);
   * otherwise a Notification (permission_prompt) goes out and the person is asked.
   */
  asking(asker: PermissionAsker): PermissionAsker {
    return {
      ask: async (request, signal) => {
        const o = await this.fire({ hook_event_name: 'PermissionRequest', tool_name: request.tool, tool_input: asRecord(request.input), permission_suggestions: request.suggestedRules ?? [] }, signal);
        if (o.permissionRequest?.behavior === 'deny') {
          if (o.permissionRequest.interrupt) this.id.requestStop(o.permissionRequest.message);
          return { decision: 'deny', feedback: `A PermissionRequest hook denied this: ${o.permissionRequest.message}` };
        }
        if (o.permissionRequest?.behavior === 'allow') return { decision: 'allow' };
        void this.fire({ hook_event_name: 'Notification', notification_type: 'permission_prompt', message: `Keel needs your permission to use ${request.tool}`, title: 'Permission needed' });
        return asker.ask(request, signal);
      },
    };
  }

  private common(): HookCommonInput {
    return {
      session_id: this.id.sessionId,
      transcript_path: this.id.transcriptPath,
      cwd: this.id.workspace,
      permission_mode: this.id.mode(),
      ...(this.isSubagent ? { agent_id: this.id.taskId, agent_type: 'Task' } : {}),
    };
  }
}

function withNotes(result: ToolResultBlock, notes: string[]): ToolResultBlock {
  if (notes.length === 0) return result;
  const text = notes.map((n) => `[hook] ${n}`).join('\n');
  return { ...result, content: result.content ? `${result.content}\n\n${text}` : text };
}

function asRecord(input: unknown): Record<string, unknown> {
  return input && typeof input === 'object' && !Array.isArray(input) ? (input as Record<string, unknown>) : {};
}

/** A tool result's text (what PostToolUseFailure's `error` says). */
function resultText(result: ToolResultBlock): string {
  const c = result.content;
  if (typeof c === 'string') return c;
  return c.map((b) => (b.type === 'text' ? b.text : '')).join('\n');
}
