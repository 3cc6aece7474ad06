import * as vscode from 'vscode';
import { isAbsolute, join, relative } from 'node:path';
import type { ProblemEntry, ProblemSeverity, TerminalCapture } from '../../core/mentions/reports';
import type { EditorMentions } from '../chatHost';
import type { Logger } from '../logger';

/** Characters of a command's output kept per terminal (its end; the attachment is smaller still). */
const KEPT_OUTPUT = 256 * 1024;

type LastCommand = NonNullable<TerminalCapture['lastCommand']>;

/**
 * What `@problems` and `@terminal` read from VS Code: the diagnostics the editor holds (of the
 * workspace's files, or of one), and the active terminal's selection or last command.
 *
 * A terminal's output can only be read while a command runs (shell integration's `read()`), so
 * each command's output is kept as it is written — its last 256 KB, for the terminal's last
 * command only, dropped when the terminal closes. VS Code has no API for a terminal's selection:
 * it is read with VS Code's own Copy command, and the clipboard is put back as it was.
 */
export function editorMentions(workspace: string, log: Logger): EditorMentions & vscode.Disposable {
  const last = new Map<vscode.Terminal, LastCommand>();
  const running = new Map<vscode.TerminalShellExecution, LastCommand>();
  const disposables = [
    vscode.window.onDidStartTerminalShellExecution((e) => {
      const entry: LastCommand = { commandLine: e.execution.commandLine.value, output: '', running: true, ...(e.execution.cwd ? { cwd: e.execution.cwd.fsPath } : {}) };
      last.set(e.terminal, entry);
      running.set(e.execution, entry);
      void (async () => {
        try {
          for await (const data of e.execution.read()) {
            entry.output += data;
            if (entry.output.length > KEPT_OUTPUT * 2) entry.output = entry.output.slice(-KEPT_OUTPUT);
          }
        } catch (err) {
          log.debug(`terminal output of "${entry.commandLine}" could not be read: ${String(err)}`);
        }
        if (entry.output.length > KEPT_OUTPUT) entry.output = entry.output.slice(-KEPT_OUTPUT);
      })();
    }),
    vscode.window.onDidEndTerminalShellExecution((e) => {
      const entry = running.get(e.execution);
      running.delete(e.execution);
      if (!entry) return;
      entry.running = false;
      // The command line is often more accurate once it ended.
      entry.commandLine = e.execution.commandLine.value || entry.commandLine;
      if (e.exitCode !== undefined) entry.exitCode = e.exitCode;
    }),
    vscode.window.onDidCloseTerminal((t) => last.delete(t)),
  ];

  return {
    workspace,
    async problems(path) {
      const out: ProblemEntry[] = [];
      const add = (uri: vscode.Uri, diagnostics: readonly vscode.Diagnostic[]) => {
        const rel = relative(workspace, uri.fsPath);
        if (uri.scheme !== 'file' || rel.startsWith('..') || isAbsolute(rel)) return;
        for (const d of diagnostics) out.push(problemOf(rel, d));
      };
      if (path !== undefined) add(vscode.Uri.file(join(workspace, path)), vscode.languages.getDiagnostics(vscode.Uri.file(join(workspace, path))));
      else for (const [uri, diagnostics] of vscode.languages.getDiagnostics()) add(uri, diagnostics);
      return out;
    },
    async terminal() {
      const t = vscode.window.activeTerminal;
      if (!t) return null;
      const selection = await terminalSelection(log);
      const command = last.get(t);
      return { name: t.name, ...(selection ? { selection } : {}), ...(command ? { lastCommand: { ...command } } : {}) };
    },
    dispose() {
      for (const d of disposables) d.dispose();
      last.clear();
      running.clear();
    },
  };
}

const SEVERITIES: Record<vscode.DiagnosticSeverity, ProblemSeverity> = {
  [vscode.DiagnosticSeverity.Error]: 'error',
  [vscode.DiagnosticSeverity.Warning]: 'warning',
  [vscode.DiagnosticSeverity.Information]: 'info',
  [vscode.DiagnosticSeverity.Hint]: 'hint',
};

function problemOf(path: string, d: vscode.Diagnostic): ProblemEntry {
  const code = typeof d.code === 'object' ? d.code.value : d.code;
  return {
    path,
    line: d.range.start.line + 1,
    column: d.range.start.character + 1,
    severity: SEVERITIES[d.severity],
    message: d.message,
    ...(d.source ? { source: d.source } : {}),
    ...(code !== undefined ? { code: String(code) } : {}),
  };
}

/** The active terminal's selected text, through VS Code's Copy command; the clipboard is restored. */
async function terminalSelection(log: Logger): Promise<string | undefined> {
  const before = await vscode.env.clipboard.readText();
  const marker = `keel-no-selection-${Date.now()}-${Math.random()}`;
  try {
    await vscode.env.clipboard.writeText(marker);
    await vscode.commands.executeCommand('workbench.action.terminal.copySelection');
    const copied = await vscode.env.clipboard.readText();
    return copied && copied !== marker ? copied : undefined;
  } catch (err) {
    log.debug(`the terminal's selection could not be read: ${String(err)}`);
    return undefined;
  } finally {
    await vscode.env.clipboard.writeText(before);
  }
}
