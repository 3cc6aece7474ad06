import { errorMessage } from '../../shared/domain/errors';
import type { LoopActionMessage } from '../../shared/protocol/fromWebview';
import type { LoopAction, LoopsState } from '../../shared/protocol/loopMessages';
import type { ToWebviewPayload } from '../../shared/protocol/toWebview';
import { type Logger } from '../logger';
import type { ViewConnection } from '../viewConnection';

/** What the chat needs of the window's loops (loopUi.ts over a LoopRegistry; a fake in tests). */
export interface LoopChat {
  state(): LoopsState;
  onChange(listener: () => void): () => void;
  /** Does what the person asked and says what happened, in words; rejects with why it could not. */
  act(action: LoopAction, name: string, commit?: string): Promise<string>;
}

/**
 * The loop page's requests: `getLoops` answers the asking view and, from then on, every view hears
 * each change (`loops`); `loopAction` does what the person asked and says how it went (a notice),
 * the new state following. Never throws.
 */
export class LoopRequests {
  private unsubscribe: (() => void) | undefined;

  constructor(
    private readonly loops: LoopChat | undefined,
    private readonly log: Logger,
    private readonly broadcast: (payload: ToWebviewPayload) => void,
  ) {}

  async handle(view: Pick<ViewConnection, 'send'>, m: { type: 'getLoops' } | LoopActionMessage): Promise<void> {
    const loops = this.loops;
    if (!loops) {
      view.send({ type: 'loops', state: { loops: [], problems: [], available: false } });
      return;
    }
    this.unsubscribe ??= loops.onChange(() => this.broadcast({ type: 'loops', state: loops.state() }));
    if (m.type === 'loopAction') {
      try {
        const message = await loops.act(m.action, m.name, m.commit);
        this.log.info(`loop ${m.name}: ${m.action}: ${message}`);
        view.send({ type: 'notice', message });
      } catch (e) {
        this.log.warn(`loop ${m.name}: ${m.action} failed: ${errorMessage(e)}`);
        view.send({ type: 'notice', message: `Could not ${m.action} loop "${m.name}": ${errorMessage(e)}` });
      }
    }
    view.send({ type: 'loops', state: loops.state() });
  }

  dispose(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }
}
