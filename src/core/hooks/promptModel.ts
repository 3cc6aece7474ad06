import type { Usage } from '../../shared/domain/messages';
import { requestEstimateUsd, usd, type BudgetVerdict } from '../machines/turn/budget';
import { costUsd } from '../providers/pricing';
import { normalizeModelId } from '../providers/modelChoice';
import type { ModelProvider, RawUsage } from '../providers/types';
import { errorMessage } from '../../shared/domain/errors';
import type { PromptHookModel } from './promptHook';

/** The most a prompt hook's answer may be: a short JSON object. */
export const PROMPT_HOOK_MAX_TOKENS = 512;

/**
 * The model a task's prompt hooks ask (docs/hooks.md, "Prompt hooks"): one short request on the
 * task's own provider, priced and admitted by the task's budget before it goes (like every
 * request: machines/turn/budget.ts) and charged to the task with what the server reported, even
 * when the answer is unusable. Which model: on Anthropic the hook's `model` (aliases as Claude
 * Code's), by default Claude Code's choice, the fast `haiku`; on any other provider the task's
 * own model (a Claude name means nothing to an OpenAI-compatible server, and a local server may
 * serve one model only). In the host and on a worker alike; only where the budget is asked and
 * the cost goes differs (the caller's `admit` and `charge`).
 */
export interface PromptModelDeps {
  taskId: string;
  /** The task's provider (created on first use by the caller); an error message when it cannot be had. */
  provider(): Promise<ModelProvider | string>;
  /** The task's model now. */
  taskModel(): string;
  /** The task's budget: null when a request that may cost `estimateUsd` may go. */
  admit(estimateUsd: number): Promise<BudgetVerdict>;
  /** Adds a call's usage and price to the task. */
  charge(usage: Usage, costUsd: number): void;
}

export function promptHookModelId(provider: Pick<ModelProvider, 'id'>, hookModel: string | undefined, taskModel: string): string {
  if (provider.id !== 'anthropic') return taskModel;
  return normalizeModelId(hookModel) ?? normalizeModelId('haiku') ?? taskModel;
}

export function createPromptHookModel(deps: PromptModelDeps): PromptHookModel {
  return {
    async ask({ system, prompt, model: hookModel, signal }) {
      let provider: ModelProvider | string;
      try {
        provider = await deps.provider();
      } catch (err) {
        provider = errorMessage(err);
      }
      if (typeof provider === 'string') return { ok: false, error: `no model to ask: ${provider}` };
      const model = promptHookModelId(provider, hookModel, deps.taskModel());
      const messages = [{ role: 'user' as const, content: [{ type: 'text' as const, text: prompt }] }];
      const verdict = await deps.admit(requestEstimateUsd(model, [system], messages, [], PROMPT_HOOK_MAX_TOKENS));
      if (verdict) {
        return { ok: false, error: `not asked: the task has spent ${usd(verdict.spentUsd)} of its ${usd(verdict.capUsd)} budget and this call could cost up to ${usd(verdict.estimateUsd)}` };
      }
      let text = '';
      let failure: string | null = null;
      const usage: Usage = { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 };
      const add = (u: RawUsage) => {
        usage.inputTokens = Math.max(usage.inputTokens, u.input_tokens ?? 0);
        usage.outputTokens = Math.max(usage.outputTokens, u.output_tokens ?? 0);
        usage.cacheReadTokens = Math.max(usage.cacheReadTokens, u.cache_read_input_tokens ?? 0);
        usage.cacheWriteTokens = Math.max(usage.cacheWriteTokens, u.cache_creation_input_tokens ?? 0);
      };
      try {
        for await (const e of provider.stream({ model, system: [system], messages, tools: [], maxTokens: PROMPT_HOOK_MAX_TOKENS, taskId: deps.taskId }, signal)) {
          if (e.type === 'message_start') add(e.message.usage);
          else if (e.type === 'message_delta') add(e.usage);
          else if (e.type === 'content_block_delta' && e.delta.type === 'text_delta') text += e.delta.text;
          else if (e.type === 'provider_error') failure = e.error.message;
        }
      } catch (err) {
        failure = errorMessage(err);
      }
      // What the call used counts whatever it answered.
      if (usage.inputTokens + usage.outputTokens + usage.cacheReadTokens + usage.cacheWriteTokens > 0) deps.charge(usage, costUsd(model, usage));
      return failure !== null ? { ok: false, error: `the model call failed: ${failure}` } : { ok: true, text };
    },
  };
}
