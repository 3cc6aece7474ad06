import { count, type MentionLimits } from './limits';

/**
 * What the editor knows, as the model reads it: `@problems` (the editor's diagnostics) and
 * `@terminal` (the active terminal's selection or last command). The editor gathers the data
 * (src/extension/mentions); these functions bound it and say what was cut. Pure.
 */

export type ProblemSeverity = 'error' | 'warning' | 'info' | 'hint';

export interface ProblemEntry {
  /** Workspace-relative path. */
  path: string;
  /** 1-based. */
  line: number;
  column: number;
  severity: ProblemSeverity;
  message: string;
  /** Who reported it: `ts`, `eslint`, … */
  source?: string;
  code?: string;
}

const SEVERITY_ORDER: Record<ProblemSeverity, number> = { error: 0, warning: 1, info: 2, hint: 3 };

/** The problems as lines (`src/a.ts:3:7 error TS2322 (ts): …`), errors first, at most `limits.problems`. */
export function formatProblems(entries: readonly ProblemEntry[], scope: string | undefined, limits: MentionLimits): { content: string; note?: string } {
  if (entries.length === 0) return { content: scope ? `No problems in ${scope}.` : 'No problems in the workspace.' };
  const sorted = [...entries].sort((a, b) => SEVERITY_ORDER[a.severity] - SEVERITY_ORDER[b.severity] || a.path.localeCompare(b.path) || a.line - b.line || a.column - b.column);
  const shown = sorted.slice(0, limits.problems);
  const lines = shown.map((p) => {
    const code = p.code ? ` ${p.code}` : '';
    const source = p.source ? ` (${p.source})` : '';
    return `${p.path}:${p.line}:${p.column} ${p.severity}${code}${source}: ${p.message.replace(/\s*\n\s*/g, ' ')}`;
  });
  const tally = (['error', 'warning', 'info', 'hint'] as const).map((s) => [s, entries.filter((e) => e.severity === s).length] as const).filter(([, n]) => n > 0);
  const head = `${tally.map(([s, n]) => `${count(n)} ${s}${n === 1 ? '' : 's'}`).join(', ')}${scope ? ` in ${scope}` : ' in the workspace'}:`;
  const cut = entries.length - shown.length;
  return { content: `${head}\n${lines.join('\n')}`, ...(cut > 0 ? { note: `${count(cut)} more problems were cut (at most ${count(limits.problems)} are attached, errors first)` } : {}) };
}

export interface TerminalCapture {
  /** The terminal's name, as its tab shows it. */
  name: string;
  /** The text selected in it, when there is a selection. */
  selection?: string;
  /** Its last command that shell integration saw finish (or still running). */
  lastCommand?: { commandLine: string; output: string; exitCode?: number; cwd?: string; running?: boolean };
}

/**
 * The terminal's selection, else its last command and output; the end of a long text is kept
 * (the part a person looks at). Undefined content with a reason when there is nothing to attach.
 */
export function formatTerminal(t: TerminalCapture, limits: MentionLimits): { content: string; note?: string } | { failed: string } {
  let body: string;
  let what: string;
  if (t.selection && t.selection.trim()) {
    body = t.selection;
    what = `The selection in terminal "${t.name}":`;
  } else if (t.lastCommand) {
    const c = t.lastCommand;
    const status = c.running ? 'still running' : c.exitCode === undefined ? 'exit status unknown' : `exit code ${c.exitCode}`;
    what = `The last command in terminal "${t.name}"${c.cwd ? ` (in ${c.cwd})` : ''}, ${status}:\n$ ${c.commandLine}`;
    body = c.output;
  } else {
    return { failed: `terminal "${t.name}" has no selection, and no command output is known (VS Code's shell integration must be on for the terminal; run the command again)` };
  }
  const clean = stripAnsi(body);
  if (clean.length <= limits.terminalChars) return { content: `${what}\n${clean}` };
  const kept = clean.slice(clean.length - limits.terminalChars);
  return { content: `${what}\n${kept}`, note: `only the last ${count(limits.terminalChars)} of ${count(clean.length)} characters are attached; the start was cut` };
}

/** Terminal text without colour and cursor escape sequences (what a person reads on screen). */
export function stripAnsi(s: string): string {
  // CSI sequences, OSC sequences (ended by BEL or ST), and other two-character escapes.
  // eslint-disable-next-line no-control-regex
  return s.replace(/\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]/g, '').replace(/\r\n/g, '\n').replace(/\r(?!\n)/g, '\n');
}
