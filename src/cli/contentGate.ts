import type { ProjectContentGate } from '../core/commands/projectGate';
import type { TrustView } from '../core/trust/items';

/**
 * The approval of a workspace's own commands and skills in a headless run (docs/commands.md,
 * "Trust"): the workspace's trust, like everything else it provides — `keel trust approve`
 * approves them (each for its exact text), `keel trust show` lists them.
 */
export function cliContentGate(trust: TrustView, workspace: string, keelHome: string): { gate: ProjectContentGate; approveHint: string } {
  return {
    gate: trust,
    approveHint: `review it with keel trust show --workspace ${workspace} --storage ${keelHome}, approve it with keel trust approve (same options)`,
  };
}
