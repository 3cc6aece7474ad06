import { createPermissionEngine, type PermissionEngine } from '../permissions/engine';
import { decideByMode } from '../permissions/gate';
import type { SandboxSettings } from '../sandbox/settings';
import type { PermissionDecider } from './wiring';

/**
 * The default permission engine, loaded on the first decision (it loads the shell parser's wasm).
 * If it cannot load, nothing is allowed that the mode alone would not allow, and whatever would be
 * allowed beyond reads asks instead: a broken engine never widens permissions.
 */
export function lazyEngine(options: { workspace: string; settingsFiles?: string[]; sandbox?: SandboxSettings }): PermissionDecider {
  let engine: Promise<PermissionEngine> | null = null;
  return {
    async decide(call, mode) {
      engine ??= createPermissionEngine({
        workspace: options.workspace,
        ...(options.settingsFiles ? { settingsFiles: options.settingsFiles } : {}),
        ...(options.sandbox ? { sandbox: { enabled: options.sandbox.enabled } } : {}),
      });
      try {
        return await (await engine).decide(call, mode);
      } catch (err) {
        const reason = `the permission engine could not load (${(err as Error).message})`;
        if (call.subject.kind === 'read') {
          const byMode = decideByMode(mode === 'dontAsk' ? 'dontAsk' : 'default', call.subject, call.readOnly, options.workspace);
          return { ...byMode, reason: `${byMode.reason} (${reason})` };
        }
        // Plan mode denies what it cannot prove read-only; dontAsk denies what would ask.
        return { decision: mode === 'dontAsk' || (mode === 'plan' && !call.readOnly) ? 'deny' : 'ask', reason };
      }
    },
  };
}
