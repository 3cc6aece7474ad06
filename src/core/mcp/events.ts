import type { McpServerStatus } from './types';
import type { EventBus } from '../events/eventBus';
import type { BusEventInit } from '../events/types';

/** What the bridge needs of an MCP hub (src/core/mcp/hub.ts implements it, as does the extension's hub). */
export interface McpStatusSource {
  /** Every server with its live state. */
  status(): McpServerStatus[];
  /** Called after any server's state changes (synchronously, once per machine transition); returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

export type McpBusEvent = Extract<BusEventInit, { kind: 'McpServerStateChanged' }>;

/** What the bridge compares between two looks at a server. */
interface Seen {
  state: string;
  approval: McpServerStatus['approval'];
}

/**
 * The `McpServerStateChanged` events between two looks at the hub's servers: one per server
 * whose full state or approval differs from what was `seen` (updated in place), in the hub's
 * configuration order. A server never seen before counts as changed (`previous` null).
 */
export function mcpChanges(servers: readonly McpServerStatus[], seen: Map<string, Seen>): McpBusEvent[] {
  const out: McpBusEvent[] = [];
  for (const s of servers) {
    const before = seen.get(s.name);
    if (before && before.state === s.state && before.approval === s.approval) continue;
    seen.set(s.name, { state: s.state, approval: s.approval });
    out.push({
      kind: 'McpServerStateChanged',
      server: s.name,
      phase: s.phase,
      state: s.state,
      previous: before?.state ?? null,
      approval: s.approval,
      attempts: s.attempts,
      tools: s.tools.length,
      ...(s.lastError ? { lastError: s.lastError } : {}),
    });
  }
  return out;
}

/**
 * Publishes every state change of the hub's servers on `bus` from now on (the states they are in
 * now are the baseline, not published). The hub calls its listeners synchronously after each
 * machine transition, so every transition is published, in order. Returns the function that stops it.
 */
export function bridgeMcpEvents(bus: EventBus, hub: McpStatusSource, onError: (err: unknown) => void = () => undefined): () => void {
  const seen = new Map<string, Seen>();
  mcpChanges(hub.status(), seen);
  return hub.subscribe(() => {
    try {
      for (const e of mcpChanges(hub.status(), seen)) bus.publish(e);
    } catch (err) {
      onError(err);
    }
  });
}
