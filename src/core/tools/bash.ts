import * as z from 'zod/mini';
import { described } from './described';
import { Sandbox } from '../sandbox/sandbox';
import { CappedText } from './cappedText';
import { findOnPath, isExecutableFile } from './executables';
import { runProcess } from './processRunner';
import type { Tool, ToolContext, ToolResult } from './types';

export const BASH_DEFAULT_TIMEOUT_MS = 120_000;
export const BASH_MAX_TIMEOUT_MS = 600_000;
/** Characters of output the model receives; the middle of longer output is dropped. */
export const BASH_MAX_OUTPUT_CHARS = 30_000;

const inputSchema = z.object({
  command: described(z.string().check(z.minLength(1)), 'The command to execute'),
  timeout: described(z.optional(z.number().check(z.int(), z.gte(1), z.lte(BASH_MAX_TIMEOUT_MS))), `Optional timeout in milliseconds (max ${BASH_MAX_TIMEOUT_MS})`),
  description: described(z.optional(z.string()), 'A clear, concise description of what this command does, in 5-10 words'),
  dangerouslyDisableSandbox: described(z.optional(z.boolean()), 'Run outside the sandbox (the user is always asked). Only when the sandbox blocks something the task truly needs.'),
});
export type BashInput = z.infer<typeof inputSchema>;

const description = `Executes a bash command in the workspace root and returns its combined stdout and stderr.
- Default timeout ${BASH_DEFAULT_TIMEOUT_MS} ms (${BASH_DEFAULT_TIMEOUT_MS / 60000} minutes), at most ${BASH_MAX_TIMEOUT_MS} ms. On timeout the command and everything it started is killed.
- Output longer than ${BASH_MAX_OUTPUT_CHARS} characters is cut in the middle.
- stdin is closed: interactive commands will not wait for input.
- A non-zero exit code is reported as an error together with the output.
- Prefer Read, Glob and Grep over cat, find and grep.`;

/**
 * The Bash tool. Every command goes through `sandbox` (the runtime's; default: off), whose
 * machine says how it runs: directly, inside bubblewrap (see src/core/sandbox/), or not at all
 * when the sandbox is on but cannot run here (the result says why). A call with
 * `dangerouslyDisableSandbox` runs directly only after the permission engine asked the person.
 */
export function createBashTool(opts: { sandbox?: Sandbox } = {}): Tool<BashInput> {
  const sandbox = opts.sandbox ?? OFF;
  return { ...bashTool, invoke: (input, ctx) => invokeBash(input, ctx, sandbox) };
}

const OFF = Sandbox.off();

export const bashTool: Tool<BashInput> = {
  name: 'Bash',
  description,
  inputSchema,
  readOnly: false,
  subject(input, ctx) {
    const firstLine = input.command.split('\n')[0] ?? '';
    const short = firstLine.length > 80 || input.command.includes('\n') ? `${firstLine.slice(0, 80)}…` : firstLine;
    return { kind: 'execute', tool: 'Bash', command: input.command, cwd: ctx.workspace, summary: input.description?.trim() || `Run ${short}` };
  },
  invoke: (input, ctx) => invokeBash(input, ctx, OFF),
};

async function invokeBash(input: BashInput, ctx: ToolContext, sandbox: Sandbox): Promise<ToolResult> {
  {
    const launch = await sandbox.launch({ command: input.command, dangerouslyDisableSandbox: input.dangerouslyDisableSandbox === true, workspace: ctx.workspace, shell: shellPath() });
    if (launch.kind === 'refused') return { content: `The sandbox is enabled but unavailable: ${launch.reason}. The command was not run.`, isError: true, summary: 'sandbox unavailable' };
    const { file, args } = launch;
    const timeoutMs = Math.min(input.timeout ?? BASH_DEFAULT_TIMEOUT_MS, BASH_MAX_TIMEOUT_MS);
    const output = new CappedText(BASH_MAX_OUTPUT_CHARS);
    const onChunk = (chunk: string): void => {
      output.append(chunk);
      try {
        ctx.onOutput(chunk);
      } catch {
        // A failing listener must not take the command (or the host) down with it.
      }
    };
    const outcome = await runProcess(file, args, {
      cwd: ctx.workspace,
      signal: ctx.signal,
      ...(ctx.env ? { env: ctx.env } : {}),
      timeoutMs,
      onStdout: onChunk,
      onStderr: onChunk,
    });
    const text = output.text().replace(/\n+$/, '');
    const body = text.length > 0 ? text : '(no output)';
    switch (outcome.kind) {
      case 'spawnFailed':
        return { content: `Could not run the command: ${outcome.message}`, isError: true, summary: 'failed to start' };
      case 'cancelled':
        return { content: `The command was cancelled; it and its child processes were killed.\nOutput so far:\n${body}`, isError: true, summary: 'cancelled' };
      case 'timedOut':
        return {
          content: `The command timed out after ${timeoutMs} ms and was killed (with its child processes).\nOutput so far:\n${body}`,
          isError: true,
          summary: `timed out after ${timeoutMs} ms`,
        };
      case 'exited':
        return exitedResult(body, outcome.code, outcome.signal, outcome.pipesHeldOpen);
    }
  }
}

function exitedResult(body: string, code: number | null, signal: NodeJS.Signals | null, pipesHeldOpen: boolean): ToolResult {
  const note = pipesHeldOpen ? '\n[background processes kept running; their later output is not captured]' : '';
  if (signal) return { content: `${body}\n[killed by ${signal}]${note}`, isError: true, summary: `killed by ${signal}` };
  const exit = code ?? 0;
  if (exit === 0) return { content: `${body}${note}`, isError: false, summary: 'exit 0' };
  return { content: `${body}\n[exit code ${exit}]${note}`, isError: true, summary: `exit ${exit}` };
}

let cachedShell: string | undefined;

/** bash when available (at /bin/bash or on PATH), else /bin/sh. */
export function shellPath(): string {
  cachedShell ??= isExecutableFile('/bin/bash') ? '/bin/bash' : (findOnPath('bash') ?? '/bin/sh');
  return cachedShell;
}
