import { homedir } from 'node:os';
import { join } from 'node:path';
import type { TrustView } from '../trust/items';
import { defaultSources, loadSettings, stampOf, type SettingsSource } from './settings';
import { FileWatch } from './settingsWatch';

/**
 * The `env` of the settings files, as Claude Code applies it to every session: the variables
 * every command, hook and MCP server Keel runs gets on top of its filtered environment
 * (toolEnvironment.ts). The person's `~/.keel/settings.json` is used as written; a workspace
 * file's variables only once the person approved each (docs/permissions.md, "Trust"), and never
 * those a workspace may not set (trust/projectEnv.ts). Re-read when a file or an approval
 * changes (watched). Never throws.
 */
export class SettingsEnvironment {
  private readonly sources: SettingsSource[];
  private readonly watch: FileWatch;
  private readonly home: string;
  private cached: Readonly<Record<string, string>> | null = null;
  private trustVersion = -1;

  constructor(private readonly opts: { workspace: string; home?: string; trust: TrustView }) {
    this.home = opts.home ?? homedir();
    this.sources = defaultSources(opts.workspace, join(this.home, '.keel', 'settings.json'));
    this.watch = new FileWatch(
      this.sources.map((s) => s.path),
      () => stampOf(this.sources),
    );
  }

  /** The variables now. */
  current(): Readonly<Record<string, string>> {
    const changed = this.watch.changed();
    if (this.cached && !changed && this.opts.trust.version() === this.trustVersion) return this.cached;
    this.trustVersion = this.opts.trust.version();
    this.cached = loadSettings(this.sources, this.home, this.opts.trust).env;
    return this.cached;
  }

  dispose(): void {
    this.watch.dispose();
  }
}
