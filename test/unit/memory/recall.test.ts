import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { MemoryIndex } from '../../../src/core/memory/memoryIndex';
import { MemoryStore } from '../../../src/core/memory/memoryStore';
import { LABELLED_MEMORIES, LABELLED_QUERIES } from '../../fixtures/memory-recall/labelled';
import { measureRecall, writeMemories } from '../../fixtures/memory-recall/recall';

const ws = mkdtempSync(join(tmpdir(), 'keel-recall-'));
afterAll(() => rmSync(ws, { recursive: true, force: true }));

describe('memory search on the labelled set', () => {
  it('is a set of at least 100 memories and 30 queries whose answers exist', () => {
    expect(LABELLED_MEMORIES.length).toBeGreaterThanOrEqual(100);
    expect(new Set(LABELLED_MEMORIES.map((m) => m.file)).size).toBe(LABELLED_MEMORIES.length);
    expect(LABELLED_QUERIES.length).toBeGreaterThanOrEqual(30);
    const files = new Set(LABELLED_MEMORIES.map((m) => m.file));
    for (const q of LABELLED_QUERIES) for (const r of q.relevant) expect(files.has(r), r).toBe(true);
  });

  it('finds the relevant memories in the top 5 (recall@5 at least 0.85)', () => {
    writeMemories(ws);
    const index = new MemoryIndex(new MemoryStore(ws));
    const report = measureRecall(index);
    console.log(`recall@5 = ${report.recallAt5.toFixed(3)} over ${report.queries} queries; misses: ${JSON.stringify(report.misses, null, 1)}`);
    expect(index.size).toBe(LABELLED_MEMORIES.length);
    expect(report.recallAt5).toBeGreaterThanOrEqual(0.85);
  });
});
