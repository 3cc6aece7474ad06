/**
 * MCP limits, with Claude Code's environment variables honoured: `MCP_TIMEOUT` (connect and
 * initialize, ms), `MCP_TOOL_TIMEOUT` (one tool call, ms), `MAX_MCP_OUTPUT_TOKENS` (what a tool
 * result may add to the conversation); and Keel's `KEEL_MCP_STARTUP_WAIT` (ms). A value that is not a positive integer is ignored (the
 * default applies) and reported, never fatal.
 */
export interface McpLimits {
  connectTimeoutMs: number;
  /**
   * How long the first model request waits for servers still starting (`KEEL_MCP_STARTUP_WAIT`,
   * ms). A server slower than this (or hung) does not hold the request up: its tools join a later
   * request once it is ready, and the host is told (a warning in the log).
   */
  startupWaitMs: number;
  toolTimeoutMs: number;
  maxOutputTokens: number;
  /**
   * The largest message Keel reads from a stdio server (bytes). A bigger one (a huge tool result)
   * is not read: its request is answered with an error saying how big it was; the server goes on.
   */
  maxMessageBytes: number;
  /** Restarts after a failure before the server stays in error until restarted by the person. */
  maxRestartAttempts: number;
  /** Delay before restart attempt n (1-based) is `backoffMs[min(n, len) - 1]`. */
  backoffMs: readonly number[];
  /** A connection that stayed ready this long forgets its earlier failed attempts. */
  stableAfterMs: number;
  /** Lines of a stdio server's stderr kept for the status. */
  stderrLines: number;
}

export const DEFAULT_MCP_LIMITS: McpLimits = {
  connectTimeoutMs: 30_000,
  startupWaitMs: 5_000,
  toolTimeoutMs: 10 * 60_000,
  maxOutputTokens: 25_000,
  maxMessageBytes: 64 * 1024 * 1024,
  maxRestartAttempts: 5,
  backoffMs: [1000, 2000, 4000, 8000, 16000, 30000],
  stableAfterMs: 60_000,
  stderrLines: 20,
};

export function limitsFromEnv(env: Readonly<Record<string, string | undefined>>, base: McpLimits = DEFAULT_MCP_LIMITS): { limits: McpLimits; problems: string[] } {
  const problems: string[] = [];
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return fallback;
    const n = Number(raw);
    if (Number.isInteger(n) && n > 0) return n;
    problems.push(`${name}=${raw} is not a positive integer; using ${fallback}`);
    return fallback;
  };
  return {
    limits: {
      ...base,
      connectTimeoutMs: num('MCP_TIMEOUT', base.connectTimeoutMs),
      startupWaitMs: num('KEEL_MCP_STARTUP_WAIT', base.startupWaitMs),
      toolTimeoutMs: num('MCP_TOOL_TIMEOUT', base.toolTimeoutMs),
      maxOutputTokens: num('MAX_MCP_OUTPUT_TOKENS', base.maxOutputTokens),
    },
    problems,
  };
}

/** The wait before restart attempt `attempt` (1-based). */
export function backoffDelay(limits: Pick<McpLimits, 'backoffMs'>, attempt: number): number {
  const table = limits.backoffMs;
  return table[Math.min(Math.max(attempt, 1), table.length) - 1] ?? 30_000;
}
