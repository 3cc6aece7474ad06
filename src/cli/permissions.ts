import { resolve } from 'node:path';
import { createPermissionEngine } from '../core/permissions';
import type { PermissionMode } from '../core/runtime/types';
import { createToolRegistry } from '../core/tools/registry';
import { parseToolInput } from '../core/tools/execute';
import { HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';

const MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;

export const PERMISSIONS_HELP = `Usage:
  keel permissions check --tool NAME --input JSON [--workspace DIR] [--settings FILE]... [--mode MODE] [--home DIR]
Prints the permission decision for one tool call as one JSON line: {"decision","reason","rule",...}.
  --workspace DIR   the workspace whose .keel/ and .claude/ settings apply (default: current directory)
  --settings FILE   an extra settings file (repeatable)
  --mode MODE       default | acceptEdits | plan | dontAsk | bypassPermissions (default: the settings' defaultMode, else default)
  --home DIR        the home folder for user settings and ~ (default: yours)
`;

const CHECK_OPTIONS = {
  tool: { type: 'string' },
  input: { type: 'string' },
  workspace: { type: 'string' },
  settings: { type: 'string', multiple: true },
  mode: { type: 'string' },
  home: { type: 'string' },
} as const;

/**
 * `keel permissions check --tool <Name> --input '<json>' [--workspace DIR] [--settings FILE]...
 * [--mode MODE] [--home DIR]`: prints one JSON line {"decision","reason","rule"} and exits 0; 2 on
 * bad usage (one line on stderr).
 */
export async function permissionsCommand(argv: string[]): Promise<number> {
  try {
    return await check(argv);
  } catch (err) {
    if (err instanceof HelpRequested) {
      process.stdout.write(PERMISSIONS_HELP);
      return 0;
    }
    if (err instanceof UsageError) return reportUsage('permissions', err);
    throw err;
  }
}

async function check(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === 'help' || sub === '--help' || sub === '-h') throw new HelpRequested();
  if (sub !== 'check') throw new UsageError(sub === undefined ? 'missing the subcommand (check)' : sub.startsWith('-') ? 'the subcommand (check) comes first' : `unknown subcommand "${sub}"`);
  const { values } = parseCommandLine(rest, CHECK_OPTIONS, false);
  if (!values.tool) throw new UsageError('--tool is required');
  let input: unknown;
  try {
    input = JSON.parse(values.input ?? '{}');
  } catch (err) {
    throw new UsageError(`--input is not JSON: ${(err as Error).message}`);
  }
  if (values.mode !== undefined && !(MODES as readonly string[]).includes(values.mode)) throw new UsageError(`--mode must be one of ${MODES.join(', ')} (got "${values.mode}")`);
  const workspace = resolve(values.workspace ?? process.cwd());
  const engine = await createPermissionEngine({ workspace, ...(values.settings ? { settingsFiles: values.settings } : {}), ...(values.home ? { home: values.home } : {}) });
  const mode = (values.mode ?? engine.defaultMode() ?? 'default') as PermissionMode;
  if (values.tool.startsWith('mcp__')) {
    const server = /^mcp__(.+?)__/.exec(values.tool)?.[1] ?? values.tool.slice(5);
    const d = await engine.decide({ tool: values.tool, input, subject: { kind: 'mcp', tool: values.tool, server, summary: values.tool }, readOnly: false }, mode);
    process.stdout.write(`${JSON.stringify({ decision: d.decision, reason: d.reason, rule: d.rule ?? null })}\n`);
    return 0;
  }
  const parsed = parseToolInput(createToolRegistry(), values.tool, input);
  if (!parsed.ok) {
    process.stdout.write(`${JSON.stringify({ decision: 'deny', reason: `invalid call: ${parsed.result.content}`, rule: null })}\n`);
    return 0;
  }
  const subject = parsed.tool.subject(parsed.input as never, { workspace });
  const d = await engine.decide({ tool: values.tool, input: parsed.input, subject, readOnly: parsed.tool.readOnly }, mode);
  const problems = engine.problems();
  process.stdout.write(`${JSON.stringify({ decision: d.decision, reason: d.reason, rule: d.rule ?? null, ...(d.source ? { source: d.source } : {}), ...(d.risky ? { risky: true } : {}), ...(problems.length ? { problems } : {}) })}\n`);
  return 0;
}
