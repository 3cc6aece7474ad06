import { WorkspaceTrust } from '../core/trust/workspaceTrust';
import { storageOption } from './args';
import { z } from 'zod';
import { createPermissionEngine } from '../core/permissions';
import { explainPermission } from '../core/runtime/permissionCheck';
import { loadSandboxSettings } from '../core/sandbox/settings';
import { isPermissionMode, PERMISSION_MODES } from '../shared/domain/permissionModes';
import { createToolRegistry, type ToolRegistry } from '../core/tools/registry';
import type { AnyTool } from '../core/tools/types';
import { existingPath, HelpRequested, parseCommandLine, reportUsage, UsageError } from './usage';
import { errorMessage } from '../shared/domain/errors';

export const PERMISSIONS_HELP = `Usage:
  keel permissions check --tool NAME --input JSON... [--workspace DIR] [--settings FILE]... [--mode MODE] [--home DIR] [--storage DIR]
Prints the decision a run would reach for each tool call, one JSON line per --input, in order:
{"decision","reason","rule",...}; "ask" where a run would ask the person (headless, a run denies).
A workspace's allow rules, additional directories and looser mode count only as you approved
them (keel trust); "held" lists those waiting for approval.
  --input JSON      the call's input (required; repeatable), e.g. '{"command":"npm test"}'
  --workspace DIR   the workspace whose .keel/ and .claude/ settings apply (default: current directory)
  --settings FILE   an extra settings file (repeatable)
Paths are read from the current folder and must exist (a missing --settings file is bad usage).
  --mode MODE       ${PERMISSION_MODES.join(' | ')} (default: the settings files' defaultMode, else default, as keel run)
  --home DIR        the home folder for user settings and ~ (default: yours)
  --storage DIR     Keel's home, where approvals are kept, a folder that exists (default: $KEEL_HOME or ~/.keel)
`;

const CHECK_OPTIONS = {
  tool: { type: 'string' },
  input: { type: 'string', multiple: true },
  workspace: { type: 'string' },
  settings: { type: 'string', multiple: true },
  mode: { type: 'string' },
  home: { type: 'string' },
  storage: { type: 'string' },
} as const;

/**
 * `keel permissions check --tool <Name> --input '<json>'... [--workspace DIR] [--settings FILE]...
 * [--mode MODE] [--home DIR]`: prints one JSON line {"decision","reason","rule"} per `--input`, in
 * order, and exits 0; 2 on bad usage (one line on stderr, nothing on stdout).
 *
 * It runs the decision path of a run (`explainPermission` → `decideToolCall`: input validation,
 * the tool's subject, the permission machine with plan's read-only rule, the engine's rules,
 * modes, dontAsk and safety asks) and reports `ask` where a run would ask. Without `--mode`, the
 * mode of `keel run` without `--mode`: the settings files' `defaultMode` (a workspace file may only
 * make it stricter), else `default`.
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
  if (values.mode !== undefined && !isPermissionMode(values.mode)) throw new UsageError(`--mode must be one of ${PERMISSION_MODES.join(', ')} (got "${values.mode}")`);
  if (!values.input) throw new UsageError(`--input is required: the call's input as JSON, e.g. --input '{"command":"npm test"}'`);
  const inputs: Record<string, unknown>[] = [];
  for (const text of values.input) {
    let input: unknown;
    try {
      input = JSON.parse(text);
    } catch (err) {
      throw new UsageError(`--input is not JSON: ${errorMessage(err)}`);
    }
    if (typeof input !== 'object' || input === null || Array.isArray(input)) throw new UsageError("--input must be a JSON object, as a tool call's input is");
    inputs.push(input as Record<string, unknown>);
  }
  // Every path given is resolved from the current folder and must be there: a --settings file
  // that is not read would decide as if its rules did not exist (fail open).
  const workspace = values.workspace === undefined ? process.cwd() : existingPath('--workspace', values.workspace, 'folder');
  const settingsFiles = (values.settings ?? []).map((f) => existingPath('--settings', f, 'file'));
  const home = values.home ? { home: existingPath('--home', values.home, 'folder') } : {};
  // As `keel run` does: with the sandbox on (settings files), leaving it always asks.
  const sandbox = { enabled: loadSandboxSettings({ workspace, ...home }).settings.enabled };
  // As `keel run`: the workspace's own loosening counts only as the person approved it.
  const trust = new WorkspaceTrust({ workspace, keelHome: storageOption(values.storage, process.env), ...home });
  const status = trust.status();
  const held = status.pending.filter((i) => i.kind === 'allow' || i.kind === 'directory' || i.kind === 'mode').map((i) => `${i.summary} (${i.source})`);
  const engine = await createPermissionEngine({
    workspace,
    sandbox,
    ...(settingsFiles.length ? { settingsFiles } : {}),
    ...home,
    trust,
    protectedFiles: () => trust.protectedFilesNow(),
  });
  // As `keel run`: --mode, else the settings files' defaultMode (a workspace file only stricter), else default.
  const mode = isPermissionMode(values.mode) ? values.mode : (engine.defaultMode() ?? 'default');
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
      ...(held.length ? { held } : {}),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  }
  engine.dispose?.();
  trust.dispose();
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
