import { describe, expect, it } from 'vitest';
import { mentionItems } from '../../../src/extension/mentions/mentionItems';

/** The `@` list: Keel's words first (as the person types them), then MCP resources, folders, files; a failing source gives nothing. */
describe('the @ list', () => {
  const sources = {
    files: async (q: string) => ['src/problems.ts', 'src/a.ts'].filter((f) => f.includes(q)),
    folders: async (q: string) => ['src', 'src/problems'].filter((f) => f.includes(q)),
    resources: async () => {
      throw new Error('server gone');
    },
    activeFile: () => 'src/a.ts',
  };

  it('offers the words while the query starts them, the open file’s problems with them, then folders and files', async () => {
    const items = await mentionItems('pro', sources, 50);
    expect(items.map((i) => [i.kind, i.insert])).toEqual([
      ['problems', 'problems'],
      ['problems', 'problems:src/a.ts'],
      ['folder', 'src/problems/'],
      ['file', 'src/problems.ts'],
    ]);
    expect(items[1]!.label).toBe('problems in src/a.ts');
  });

  it('an empty query lists every word and a web page (typed on), and stops at max', async () => {
    const items = await mentionItems('', sources, 50);
    expect(items.slice(0, 5).map((i) => i.insert)).toEqual(['problems', 'problems:src/a.ts', 'terminal', 'git', 'https://']);
    expect(items.find((i) => i.kind === 'url')?.partial).toBe(true);
    expect(await mentionItems('', sources, 3)).toHaveLength(3);
  });
});
