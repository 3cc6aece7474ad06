import * as z from 'zod/mini';
import type { ToolDefinition } from '../providers/types';
import { bashTool } from './bash';
import { editTool } from './edit';
import { globTool } from './glob';
import { grepTool } from './grep';
import { readTool } from './read';
import { taskTool } from './task';
import type { AnyTool } from './types';
import { webFetchTool } from './webFetch';
import { writeTool } from './write';
import { todoWriteTool } from './todoWrite';

export interface ToolRegistry {
  /** What the model is told, in registration order; schemas without the `$schema` key. */
  definitions(): ToolDefinition[];
  /** The tool with exactly this name, or undefined. */
  get(name: string): AnyTool | undefined;
  /** Tool names in registration order. */
  names(): string[];
}

/** The built-in tools, in the order the model sees them. */
export const builtinTools: readonly AnyTool[] = [bashTool, globTool, grepTool, readTool, editTool, writeTool, webFetchTool, taskTool, todoWriteTool];

/** The JSON Schema a provider sends for a tool's input (zod's input view, no `$schema`). */
export function toolInputJsonSchema(tool: AnyTool): Record<string, unknown> {
  const { $schema: _dropped, ...schema } = z.toJSONSchema(tool.inputSchema, { io: 'input' }) as Record<string, unknown>;
  return schema;
}

/**
 * A fixed set of tools, by name. Throws (at construction, a programming error) when two tools
 * share a name; otherwise never throws.
 */
export function createToolRegistry(tools: readonly AnyTool[] = builtinTools): ToolRegistry {
  const byName = new Map<string, AnyTool>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new Error(`duplicate tool name "${tool.name}"`);
    byName.set(tool.name, tool);
  }
  const definitions: ToolDefinition[] = tools.map((tool) => ({ name: tool.name, description: tool.description, input_schema: toolInputJsonSchema(tool) }));
  return {
    definitions: () => definitions.map((d) => ({ ...d, input_schema: structuredClone(d.input_schema) })),
    get: (name) => byName.get(name),
    names: () => [...byName.keys()],
  };
}
