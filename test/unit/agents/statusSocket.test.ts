import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { StatusBoard } from '../../../src/core/agents/board';
import { readAgents, StatusPublisher, watchSocket } from '../../../src/core/agents/statusSocket';
import { ActivityFeed } from '../../../src/core/events/activityFeed';
import { statusSummary } from '../../../src/shared/domain/agents';
import { Changes } from '../helpers/changes';

/** The external status socket, over a real Unix socket: snapshot first, then every hook event. */
let publisher: StatusPublisher | undefined;
afterEach(() => publisher?.close());

function setup() {
  const keelHome = mkdtempSync(join(tmpdir(), 'keel-sock-'));
  const feed = new ActivityFeed();
  const board = new StatusBoard(feed);
  publisher = new StatusPublisher({ keelHome, feed, agents: () => board.rows(), onAgentsChanged: (l) => board.subscribe(l) });
  return { keelHome, feed, board };
}

describe('status socket', () => {
  it('is private to the person, answers with the board, then streams hook events as NDJSON', async () => {
    const { keelHome, feed } = setup();
    expect(await publisher!.start()).toBe(true);
    expect(statSync(publisher!.path).mode & 0o777).toBe(0o600);
    expect(statSync(join(keelHome, 'run')).mode & 0o777).toBe(0o700);

    feed.publish({ kind: 'hook', at: 1, input: { hook_event_name: 'UserPromptSubmit', session_id: 'task-1', transcript_path: '', cwd: '/w', prompt: 'fix it' } });
    const agents = await readAgents(keelHome);
    expect(agents).toEqual([expect.objectContaining({ id: 'task-1', status: 'working', pid: process.pid })]);
    expect(statusSummary(agents)).toBe('1 working');

    const lines: Record<string, unknown>[] = [];
    const arrived = new Changes();
    const ac = new AbortController();
    const watching = watchSocket(
      publisher!.path,
      (l) => {
        lines.push(l);
        arrived.notify();
      },
      ac.signal,
    );
    await arrived.until(() => lines.length > 0, () => 'no snapshot');
    feed.publish({ kind: 'hook', at: 2, input: { hook_event_name: 'Notification', session_id: 'task-1', transcript_path: '', cwd: '/w', message: 'Keel needs your permission to use Bash', notification_type: 'permission_prompt' } });
    await arrived.until(() => lines.some((l) => l.type === 'hook'), () => JSON.stringify(lines));
    expect(lines[0]).toMatchObject({ type: 'snapshot', pid: process.pid });
    expect(lines.find((l) => l.type === 'hook')).toMatchObject({ hook_event_name: 'Notification', notification_type: 'permission_prompt', session_id: 'task-1' });
    await arrived.until(() => lines.some((l) => l.type === 'agents'), () => 'no board update');
    expect((lines.filter((l) => l.type === 'agents').at(-1)!.agents as { status: string }[])[0]!.status).toBe('attention');
    ac.abort();
    await watching;
  });

  it('finds nothing once the process closed its socket', async () => {
    const { keelHome } = setup();
    await publisher!.start();
    publisher!.close();
    expect(await readAgents(keelHome)).toEqual([]);
  });
});
