import { existsSync } from 'node:fs';
import { runProcess } from '../tools/processRunner';
import { DEFAULT_HOOK_TIMEOUT_S, type ConfiguredHook, type HookInput } from './types';

/**
 * Runs one command hook the way Claude Code does: the event's JSON on stdin, in the workspace,
 * with `CLAUDE_PROJECT_DIR` and `KEEL_PROJECT_DIR` set, as the leader of its own process group.
 * Shell form (`bash -c`, or `sh -c` where there is no bash) unless `args` is given (exec form: no
 * shell, `${CLAUDE_PROJECT_DIR}` substituted in the command and each argument). At its timeout
 * (default 60 s) the whole group is killed. Output beyond the caps is dropped as it arrives, so a
 * hook printing megabytes costs no memory. Never rejects.
 */
export interface HookCommandResult {
  exitCode: number | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when the process could not be started. */
  spawnError?: string;
  truncated: boolean;
  durationMs: number;
}

export interface HookCommandContext {
  workspace: string;
  /** The environment of tool processes (no provider keys): `SecretKeeper.environment()`. */
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Grace between SIGTERM and SIGKILL of a timed-out hook (tests shorten it). */
  killGraceMs?: number;
}

export const STDOUT_CAP = 256 * 1024;
export const STDERR_CAP = 64 * 1024;

const SHELL = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';

export async function runHookCommand(hook: ConfiguredHook, input: HookInput, ctx: HookCommandContext): Promise<HookCommandResult> {
  const started = performance.now();
  const env: NodeJS.ProcessEnv = { ...ctx.env, CLAUDE_PROJECT_DIR: ctx.workspace, KEEL_PROJECT_DIR: ctx.workspace };
  const out = new CappedBuffer(STDOUT_CAP);
  const err = new CappedBuffer(STDERR_CAP);
  const timeoutMs = Math.round((hook.timeout ?? DEFAULT_HOOK_TIMEOUT_S) * 1000);
  const [file, args] = hook.args ? [substitute(hook.command, ctx.workspace), hook.args.map((a) => substitute(a, ctx.workspace))] : [SHELL, ['-c', hook.command]];
  const outcome = await runProcess(file, args, {
    cwd: ctx.workspace,
    env,
    signal: ctx.signal,
    timeoutMs,
    stdin: `${JSON.stringify(input)}\n`,
    onStdout: (c) => out.push(c),
    onStderr: (c) => err.push(c),
    ...(ctx.killGraceMs !== undefined ? { killGraceMs: ctx.killGraceMs } : {}),
  });
  const base = { stdout: out.text, stderr: err.text, truncated: out.truncated || err.truncated, durationMs: Math.round(performance.now() - started) };
  switch (outcome.kind) {
    case 'exited':
      return { ...base, exitCode: outcome.code ?? (outcome.signal ? 128 : 1), timedOut: false, cancelled: false };
    case 'timedOut':
      return { ...base, exitCode: null, timedOut: true, cancelled: false };
    case 'cancelled':
      return { ...base, exitCode: null, timedOut: false, cancelled: true };
    case 'spawnFailed':
      return { ...base, exitCode: null, timedOut: false, cancelled: false, spawnError: outcome.message };
  }
}

function substitute(text: string, workspace: string): string {
  return text.replace(/\$\{(CLAUDE_PROJECT_DIR|KEEL_PROJECT_DIR)\}|\$(CLAUDE_PROJECT_DIR|KEEL_PROJECT_DIR)\b/g, workspace);
}

/** Keeps the first `cap` characters of a stream; the rest is counted as dropped. */
class CappedBuffer {
  private parts: string[] = [];
  private length = 0;
  truncated = false;

  constructor(private readonly cap: number) {}

  push(chunk: string): void {
    if (this.length >= this.cap) {
      if (chunk.length > 0) this.truncated = true;
      return;
    }
    const room = this.cap - this.length;
    const piece = chunk.length > room ? chunk.slice(0, room) : chunk;
    if (piece.length < chunk.length) this.truncated = true;
    this.parts.push(piece);
    this.length += piece.length;
  }

  get text(): string {
    return this.parts.join('');
  }
}
