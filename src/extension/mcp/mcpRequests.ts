import { errorMessage } from '../../shared/domain/errors';
import type { McpActionMessage } from '../../shared/protocol/fromWebview';
import type { McpAction, McpStatus } from '../../shared/protocol/mcpMessages';
import type { ToWebviewPayload } from '../../shared/protocol/toWebview';
import { type Logger } from '../logger';
import type { ViewConnection } from '../viewConnection';

/** What the chat needs of the window's MCP (McpService in the extension, a fake or a real hub in tests). */
export interface McpChat {
  status(): Promise<McpStatus>;
  act(action: McpAction, server: string): Promise<string>;
  onChange(listener: (status: McpStatus) => void): () => void;
  /** The prompt with `@server:uri` and `/mcp__server__prompt` expanded. Never rejects. */
  expand(text: string, signal: AbortSignal): Promise<string>;
}

/**
 * The MCP section's requests: `getMcpStatus` answers the asking view and, from then on, every
 * view hears each change (`mcpStatus`); `mcpAction` does what the person asked and says how it
 * went (a notice), the new state following as a change. Never throws.
 */
export class McpRequests {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly mcp: McpChat,
    private readonly log: Logger,
    private readonly broadcast: (payload: ToWebviewPayload) => void,
  ) {}

  async handle(view: Pick<ViewConnection, 'send'>, m: { type: 'getMcpStatus' } | McpActionMessage): Promise<void> {
    this.unsubscribe ??= this.mcp.onChange((status) => this.broadcast({ type: 'mcpStatus', status }));
    if (m.type === 'getMcpStatus') {
      view.send({ type: 'mcpStatus', status: await this.mcp.status() });
      return;
    }
    try {
      const message = await this.mcp.act(m.action, m.server);
      this.log.info(`MCP ${m.action} ${m.server}: ${message}`);
      view.send({ type: 'notice', message });
    } catch (e) {
      this.log.warn(`MCP ${m.action} ${m.server} failed: ${errorMessage(e)}`);
      view.send({ type: 'notice', message: `Could not ${m.action} ${m.server}: ${errorMessage(e)}` });
    }
    view.send({ type: 'mcpStatus', status: await this.mcp.status() });
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
