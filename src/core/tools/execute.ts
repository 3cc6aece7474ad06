import { errorMessage } from '../../shared/domain/errors';
import * as z from 'zod/mini';
import en from 'zod/v4/locales/en.js';

import type { ToolRegistry } from './registry';
import type { AnyTool, ToolContext, ToolResult } from './types';

// zod/mini has no messages of its own (classic zod sets English when loaded): the model reads
// these, so a worker that loads no classic zod still tells it "expected string" in words.
z.config(en());

export type ParsedToolInput = { ok: true; tool: AnyTool; input: unknown } | { ok: false; result: ToolResult };

/**
 * Looks up `name` and validates `rawInput` against the tool's schema. Never throws.
 * On failure the result is an error `ToolResult` to send back to the model as is: an unknown
 * tool lists the available ones, a bad input lists each schema problem with its path.
 * On success `input` is the schema's output (defaults applied, unknown keys dropped): the only
 * value that may be passed to the tool's `subject` and `invoke`.
 */
export function parseToolInput(registry: Pick<ToolRegistry, 'get' | 'names'>, name: string, rawInput: unknown): ParsedToolInput {
  const tool = registry.get(name);
  if (!tool) {
    return {
      ok: false,
      result: { content: `Error: unknown tool "${name}"; available: ${registry.names().join(', ')}`, isError: true, summary: `unknown tool ${name}` },
    };
  }
  const parsed = z.safeParse(tool.inputSchema, rawInput);
  if (!parsed.success) {
    return {
      ok: false,
      result: {
        content: `Error: invalid input for tool "${name}":\n${z.prettifyError(parsed.error)}\nFix the input to match the tool's schema and call it again.`,
        isError: true,
        summary: `invalid input for ${name}`,
      },
    };
  }
  return { ok: true, tool, input: parsed.data };
}

/**
 * Invokes a parsed call. Never rejects: tools already turn failures into results, and this
 * catches a tool bug the same way, so the turn loop always has a tool_result to send.
 */
export async function invokeTool(tool: AnyTool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  try {
    return await tool.invoke(input, ctx);
  } catch (err) {
    return { content: `Error: tool ${tool.name} failed unexpectedly: ${errorMessage(err)}`, isError: true, summary: `${tool.name} failed` };
  }
}
