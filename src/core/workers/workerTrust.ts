import { allowRuleItem, type TrustView } from '../trust/items';
import type { RuntimeConfig } from './protocol';

/**
 * The host's approvals as the last query carried them (docs/permissions.md, "Trust"): a worker
 * decides nothing about trust itself, it only knows what the host approved. The person's "Always
 * allow" answers during a query count here at once (the host records them too).
 */
export class WorkerTrust implements TrustView {
  private approved: Record<string, string> = {};
  private key = '';
  private generation = 0;
  protectedFiles: ReadonlyMap<string, string> = new Map();

  /** The approvals a query carried; a change makes the engine re-read its settings (`version`). */
  update(trust: RuntimeConfig['trust']): void {
    const key = JSON.stringify(trust ?? null);
    if (key === this.key) return;
    this.key = key;
    this.approved = trust?.approved ?? {};
    this.protectedFiles = new Map(trust?.protectedFiles ?? []);
    this.generation++;
  }

  approves(item: { id: string; fingerprint: string }): boolean {
    return this.approved[item.id] === item.fingerprint;
  }

  /** Rules the person saved with "Always allow" during this query (the host records them too). */
  personSaved(rules: readonly string[], where: 'project' | 'local' | 'user'): void {
    if (where === 'user') return;
    const source = where === 'local' ? '.keel/settings.local.json' : '.keel/settings.json';
    this.approved = { ...this.approved };
    for (const r of rules) {
      const item = allowRuleItem(source, r.trim());
      this.approved[item.id] = item.fingerprint;
    }
    this.generation++;
  }

  version(): number {
    return this.generation;
  }
}
