import { resolve } from 'node:path';
import type { PermissionEngine } from '../permissions/engine';
import { refusalOfChange, whenItWouldAsk } from '../permissions/modes';
import { isInside } from '../permissions/paths';
import type { SandboxSettings } from '../sandbox/settings';
import type { TrustView } from '../trust/items';
import type { PermissionDecider } from './permissionCheck';
import { errorMessage } from '../../shared/domain/errors';

/**
 * The default permission engine, loaded on the first decision: its module too (imported then, so
 * a process that never decides — a pool's worker serving a query without tool calls — never
 * evaluates the shell analysis, its tables and settings schemas; docs/benchmarks.md, pool), and
 * the shell parser's wasm.
 * If it cannot load, a broken engine never widens permissions: a change is refused where the mode
 * refuses changes, a read inside the workspace is allowed, and everything else asks (or is denied
 * where the mode asks nobody).
 */
export function lazyEngine(options: {
  workspace: string;
  settingsFiles?: string[];
  sandbox?: SandboxSettings;
  /** The person's approvals (docs/permissions.md, "Trust"). */
  trust: TrustView;
  /** Files whose writes ask in every mode (the scripts of the workspace's hooks and MCP servers). */
  protectedFiles?: () => ReadonlyMap<string, string>;
}): PermissionDecider {
  let engine: Promise<PermissionEngine> | null = null;
  const protectedFiles = options.protectedFiles;
  const load = (): Promise<PermissionEngine> =>
    (engine ??= import('../permissions/engine').then(({ createPermissionEngine }) =>
      createPermissionEngine({
        workspace: options.workspace,
        ...(options.settingsFiles ? { settingsFiles: options.settingsFiles } : {}),
        ...(options.sandbox ? { sandbox: { enabled: options.sandbox.enabled } } : {}),
        trust: options.trust,
        ...(protectedFiles ? { protectedFiles } : {}),
      }),
    ));
  return {
    async searchExclusions(root) {
      try {
        return await (await load()).searchExclusions(root);
      } catch {
        return null;
      }
    },
    async decide(call, mode) {
      load();
      try {
        return await (await load()).decide(call, mode);
      } catch (err) {
        const why = `the permission engine could not load (${errorMessage(err)})`;
        const refused = refusalOfChange(mode, call.readOnly);
        if (refused) return { ...refused, reason: `${refused.reason} (${why})` };
        const root = resolve(options.workspace);
        const s = call.subject;
        if (s.kind === 'read' && s.paths.every((p) => isInside(root, resolve(root, p)))) return { decision: 'allow', reason: `reading inside the workspace (${why})` };
        return whenItWouldAsk(mode, why);
      }
    },
  };
}
