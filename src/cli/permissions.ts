import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { createPermissionEngine } from '../core/permissions';
import type { PermissionMode } from '../core/runtime/types';
import { createToolRegistry } from '../core/tools/registry';
import { parseToolInput } from '../core/tools/execute';

const MODES = ['default', 'acceptEdits', 'plan', 'dontAsk', 'bypassPermissions'] as const;

/**
 * `keel permissions check --tool <Name> --input '<json>' [--workspace DIR] [--settings FILE]...
 * [--mode MODE]`: prints one JSON line {"decision","reason","rule"} and exits 0; 2 on bad usage.
 */
export async function permissionsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check') return usage(`unknown permissions subcommand "${sub ?? ''}"`);
  let values;
  try {
    values = parseArgs({
      args: rest,
      options: { tool: { type: 'string' }, input: { type: 'string' }, workspace: { type: 'string' }, settings: { type: 'string', multiple: true }, mode: { type: 'string' }, home: { type: 'string' } },
    }).values;
  } catch (err) {
    return usage((err as Error).message);
  }
  if (!values.tool) return usage('--tool is required');
  let input: unknown;
  try {
    input = JSON.parse(values.input ?? '{}');
  } catch (err) {
    return usage(`--input is not JSON: ${(err as Error).message}`);
  }
  const workspace = resolve(values.workspace ?? process.cwd());
  const engine = await createPermissionEngine({ workspace, ...(values.settings ? { settingsFiles: values.settings } : {}), ...(values.home ? { home: values.home } : {}) });
  const mode = (values.mode ?? engine.defaultMode() ?? 'default') as PermissionMode;
  if (!(MODES as readonly string[]).includes(mode)) return usage(`--mode must be one of ${MODES.join(', ')}`);
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

function usage(msg: string): number {
  process.stderr.write(`keel permissions: ${msg}\nUsage: keel permissions check --tool <Name> --input '<json>' [--workspace DIR] [--settings FILE]... [--mode MODE]\n`);
  return 2;
}
