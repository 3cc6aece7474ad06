import { TaskStore } from '../../../src/core/store/taskStore';
import type { TaskEvent } from '../../../src/shared/domain/events';

/**
 * The process the snapshot kill test kills (bundled and run with node by snapshotKill.test.ts):
 * it takes the task over (creating it the first time) and records tool rounds of realistic size,
 * writing a snapshot at every round and waiting for it, so that at most instants it is in the
 * middle of writing one (restore, temp file, fsync, rename) or of appending. Prints "ready" once it
 * has written its first snapshot; it never stops by itself.
 */
const [storage, id] = process.argv.slice(2) as [string, string];
const store = new TaskStore(storage, { snapshots: { every: 1, keep: 3 }, flushIntervalMs: 5 });

function round(taskId: string, n: number): TaskEvent[] {
  const tool = `toolu_${process.pid}_${n}`;
  const text = `Round ${n}: reading the next file and checking what it does. `.repeat(20);
  return [
    { type: 'turn', taskId, state: 'checkingContext', turn: n },
    { type: 'assistant_start', taskId, messageId: `msg_${n}`, model: 'claude-x' },
    { type: 'stream', taskId, mode: 'responding' },
    ...Array.from({ length: 8 }, (_, k): TaskEvent => ({ type: 'text', taskId, delta: text.slice(k * 150, (k + 1) * 150) })),
    { type: 'message', taskId, message: { role: 'assistant', content: [{ type: 'text', text: text.slice(0, 1200) }, { type: 'tool_use', id: tool, name: 'Read', input: { file_path: `src/f${n}.ts` } }] } },
    { type: 'tool_call', taskId, id: tool, name: 'Read', input: { file_path: `src/f${n}.ts` } },
    { type: 'permission', taskId, requestId: `req_${n}`, toolCallId: tool, tool: 'Read', decision: 'allow' },
    { type: 'turn', taskId, state: 'executingTool', turn: n },
    { type: 'tool_result', taskId, id: tool, is_error: false, summary: 'read 120 lines' },
    { type: 'message', taskId, message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: tool, content: `export const x${n} = 1;\n`.repeat(160) }] } },
  ];
}

async function main(): Promise<void> {
  let rec;
  try {
    rec = (await store.open(id, 'kill test')).recorder;
  } catch {
    rec = store.create({ id, title: 'kill test', model: 'claude-x', workspace: '/ws', owner: 'kill test' });
  }
  let ready = false;
  for (let n = 0; ; n++) {
    for (const e of round(id, n)) rec.record(e);
    await rec.snapshotWritten();
    if (!ready && n > 3) {
      process.stdout.write('ready\n');
      ready = true;
    }
    await new Promise((r) => setImmediate(r));
  }
}
void main();
