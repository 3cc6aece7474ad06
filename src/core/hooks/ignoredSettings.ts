import { readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { relative } from 'node:path';
import { hookSources } from './config';

/**
 * Claude Code settings keys people keep in the settings files Keel reads that Keel does not use,
 * and what to do instead. Said once per file when a host starts, so nothing is ignored silently.
 */
const IGNORED: Readonly<Record<string, string>> = {
  model: 'choose the model with --model or the keel.model setting',
  statusLine: 'Keel has no status line; the chat header and keel status show the task',
};

/**
 * One notice per settings file (`~/.keel/settings.json`, the workspace's `.claude/` and `.keel/`
 * settings) that sets keys Keel ignores (`model`, `statusLine`). A file that is missing or not
 * JSON says nothing here (its reader reports it). Never throws.
 */
export function ignoredSettingsNotices(workspace: string, home: string = homedir()): string[] {
  const out: string[] = [];
  for (const src of hookSources(workspace, home)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(src.path, 'utf8'));
    } catch {
      continue;
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) continue;
    const keys = Object.keys(IGNORED).filter((k) => k in parsed);
    if (keys.length === 0) continue;
    const shown = src.scope === 'user' ? src.path : relative(workspace, src.path);
    out.push(`${shown}: Keel ignores ${keys.map((k) => `"${k}" (${IGNORED[k]})`).join(' and ')}`);
  }
  return out;
}
