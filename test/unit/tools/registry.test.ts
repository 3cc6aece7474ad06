import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { invokeTool, parseToolInput } from '../../../src/core/tools/execute';
import { createToolRegistry } from '../../../src/core/tools/registry';
import type { AnyTool, Tool } from '../../../src/core/tools/types';
import { makeContext } from './helpers';

describe('createToolRegistry', () => {
  it('defines every built-in tool with a JSON Schema and no $schema key', () => {
    const defs = createToolRegistry().definitions();
    expect(defs.map((d) => d.name)).toEqual(['Bash', 'Glob', 'Grep', 'Read', 'Edit', 'Write', 'WebFetch', 'Task', 'TodoWrite']);
    for (const d of defs) {
      expect(d.description.length).toBeGreaterThan(20);
      expect(d.input_schema).not.toHaveProperty('$schema');
      expect(d.input_schema.type).toBe('object');
    }
    const read = defs.find((d) => d.name === 'Read');
    expect(read?.input_schema.required).toEqual(['file_path']);
    expect(Object.keys(read?.input_schema.properties as object)).toEqual(['file_path', 'offset', 'limit']);
    const grep = defs.find((d) => d.name === 'Grep');
    expect(Object.keys(grep?.input_schema.properties as object)).toEqual(expect.arrayContaining(['-i', '-n', '-A', '-B', '-C', 'output_mode', 'head_limit']));
  });

  it('finds tools by exact name and refuses duplicates', () => {
    const registry = createToolRegistry();
    expect(registry.get('Read')?.name).toBe('Read');
    expect(registry.get('read')).toBe(undefined);
    const read = registry.get('Read');
    expect(() => createToolRegistry(read ? [read, read] : [])).toThrow('duplicate tool name "Read"');
  });

  it('hands out copies of the definitions', () => {
    const registry = createToolRegistry();
    const first = registry.definitions();
    first[0]!.input_schema.type = 'mutated';
    expect(registry.definitions()[0]?.input_schema.type).toBe('object');
  });
});

describe('parseToolInput', () => {
  const registry = createToolRegistry();

  it('rejects an unknown tool and lists the available ones', () => {
    const r = parseToolInput(registry, 'Delete', {});
    expect(r.ok).toBe(false);
    expect(!r.ok && r.result).toEqual({
      content: 'Error: unknown tool "Delete"; available: Bash, Glob, Grep, Read, Edit, Write, WebFetch, Task, TodoWrite',
      isError: true,
      summary: 'unknown tool Delete',
    });
  });

  it('lists every schema problem with its path', () => {
    const r = parseToolInput(registry, 'Read', { offset: 'ten', limit: 0 });
    expect(r.ok).toBe(false);
    const content = r.ok ? '' : r.result.content;
    expect(content).toContain('invalid input for tool "Read"');
    expect(content).toContain('→ at file_path');
    expect(content).toContain('→ at offset');
    expect(content).toContain('→ at limit');
    expect(parseToolInput(registry, 'Bash', 'ls').ok).toBe(false);
    expect(parseToolInput(registry, 'Bash', { command: 'ls', timeout: 900_000 }).ok).toBe(false);
    expect(parseToolInput(registry, 'Grep', { pattern: 'x', output_mode: 'lines' }).ok).toBe(false);
  });

  it('returns the parsed input, without unknown keys', () => {
    const r = parseToolInput(registry, 'Read', { file_path: 'a.ts', extra: true });
    expect(r.ok && r.tool.name).toBe('Read');
    expect(r.ok && r.input).toEqual({ file_path: 'a.ts' });
  });
});

describe('invokeTool', () => {
  it('turns a tool that throws into an error result', async () => {
    const broken: Tool<{ n: number }> = {
      name: 'Broken',
      description: 'always throws',
      inputSchema: z.object({ n: z.number() }),
      readOnly: true,
      subject: () => ({ kind: 'task', tool: 'Broken', summary: 'broken' }),
      invoke: async () => {
        throw new Error('boom');
      },
    };
    const asAny: AnyTool = broken;
    const r = await invokeTool(asAny, { n: 1 }, makeContext('/tmp'));
    expect(r).toEqual({ content: 'Error: tool Broken failed unexpectedly: boom', isError: true, summary: 'Broken failed' });
  });

  it('runs a parsed call end to end', async () => {
    const registry = createToolRegistry();
    const parsed = parseToolInput(registry, 'Bash', { command: 'echo hi' });
    if (!parsed.ok) throw new Error(parsed.result.content);
    const r = await invokeTool(parsed.tool, parsed.input, makeContext('/tmp'));
    expect(r).toEqual({ content: 'hi', isError: false, summary: 'exit 0' });
  });
});
