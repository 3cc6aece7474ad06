import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { z } from 'zod';
import { createPermissionEngine } from '../core/permissions';
import { explainPermission } from '../core/runtime/permissionCheck';
import { isPermissionMode, PERMISSION_MODES } from '../shared/domain/permissionModes';
import { createToolRegistry, type ToolRegistry } from '../core/tools/registry';
import type { AnyTool } from '../core/tools/types';

/**
 * `keel permissions check --tool <Name> --input '<json>'... [--workspace DIR] [--settings FILE]...
 * [--mode MODE]`: prints one JSON line {"decision","reason","rule"} per `--input`, in order, and
 * exits 0; 2 on bad usage (then nothing is printed on stdout).
 *
 * It runs the decision path of a run (`explainPermission` → `decideToolCall`: input validation,
 * the tool's subject, the permission machine with plan's read-only rule, the engine's rules,
 * modes, dontAsk and safety asks) and reports `ask` where a run would ask. Without `--mode`, the
 * mode of `keel run` without `--mode`: `default`.
 */
export async function permissionsCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub !== 'check') return usage(`unknown permissions subcommand "${sub ?? ''}"`);
  let values;
  try {
    values = parseArgs({
      args: rest,
      options: {
        tool: { type: 'string' },
        input: { type: 'string', multiple: true },
        workspace: { type: 'string' },
        settings: { type: 'string', multiple: true },
        mode: { type: 'string' },
        home: { type: 'string' },
      },
    }).values;
  } catch (err) {
    return usage((err as Error).message);
  }
  if (!values.tool) return usage('--tool is required');
  const inputs: Record<string, unknown>[] = [];
  for (const text of values.input ?? ['{}']) {
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (err) {
      return usage(`--input is not JSON: ${(err as Error).message}`);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) return usage("--input must be a JSON object, as a tool call's input is");
    inputs.push(input as Record<string, unknown>);
  }
  const mode = values.mode ?? 'default';
  if (!isPermissionMode(mode)) return usage(`--mode must be one of ${PERMISSION_MODES.join(', ')}`);
  const workspace = resolve(values.workspace ?? process.cwd());
  const engine = await createPermissionEngine({ workspace, ...(values.settings ? { settingsFiles: values.settings } : {}), ...(values.home ? { home: values.home } : {}) });
  const tools = withMcpTools(createToolRegistry());
  for (const input of inputs) {
    const d = await explainPermission({ workspace, tools, permissions: engine }, { tool: values.tool, input, mode });
    const problems = engine.problems();
    const line = {
      decision: d.decision,
      reason: d.reason,
      rule: d.rule ?? null,
      ...(d.source ? { source: d.source } : {}),
      ...(d.risky ? { risky: true } : {}),
      ...(problems.length ? { problems } : {}),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  return 0;
}

/**
 * The built-in tools, and any `mcp__server__tool` name as an MCP tool that may change things
 * (no MCP server is connected here, so nothing says otherwise): what the rules decide for it.
 */
function withMcpTools(registry: ToolRegistry): Pick<ToolRegistry, 'get' | 'names'> {
  return {
    names: () => registry.names(),
    get: (name) => registry.get(name) ?? (name.startsWith('mcp__') ? mcpTool(name) : undefined),
  };
}

function mcpTool(name: string): AnyTool {
  const server = /^mcp__(.+?)__/.exec(name)?.[1] ?? name.slice(5);
  return {
    name,
    description: 'an MCP tool',
    inputSchema: z.record(z.string(), z.unknown()),
    readOnly: false,
    subject: () => ({ kind: 'mcp', tool: name, server, summary: name }),
    invoke: async () => ({ content: 'not connected', isError: true, summary: 'not connected' }),
  };
}

function usage(msg: string): number {
  process.stderr.write(`keel permissions: ${msg}\nUsage: keel permissions check --tool <Name> --input '<json>'... [--workspace DIR] [--settings FILE]... [--mode MODE]\n`);
  return 2;
}
