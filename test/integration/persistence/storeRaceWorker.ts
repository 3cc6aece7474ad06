import { randomUUID } from 'node:crypto';
import { TaskStore } from '../../../src/core/store/taskStore';

/**
 * A process of the store race test (bundled and run with node by concurrentStore.test.ts):
 * `creator N` records N short tasks one after another, as `keel run` does; `lister N` lists the
 * store N times, as `keel tasks list` does. Prints one JSON line: what went wrong, if anything.
 */
const [storage, role, countText] = process.argv.slice(2);
const count = Number(countText);
const warnings: string[] = [];
const store = new TaskStore(storage!, { log: (level, message) => level !== 'info' && warnings.push(`${level}: ${message}`) });

async function main(): Promise<void> {
  const problems: string[] = [];
  if (role === 'creator') {
    for (let i = 0; i < count; i++) {
      const id = randomUUID();
      const rec = store.create({ id, title: `race ${i}`, model: 'm', workspace: '/ws', owner: 'race creator' });
      rec.record({ type: 'task', taskId: id, state: 'running', title: `race ${i}` });
      await new Promise((r) => setTimeout(r, 2));
      rec.record({ type: 'task', taskId: id, state: 'completed', title: `race ${i}` });
      rec.record({ type: 'done', taskId: id, status: 'completed', stopReason: 'end_turn' });
      rec.close();
    }
  } else {
    for (let i = 0; i < count; i++) problems.push(...(await store.list({ includeSubtasks: true })).problems.map((p) => `${p.taskId}: ${p.message}`));
  }
  process.stdout.write(`${JSON.stringify({ problems, warnings })}\n`);
}

main().catch((err: unknown) => {
  process.stdout.write(`${JSON.stringify({ problems: [`${role} crashed: ${(err as Error).message}`], warnings })}\n`);
});
