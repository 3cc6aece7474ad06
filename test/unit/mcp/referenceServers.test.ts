import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpHub } from '../../../src/core/mcp/hub';
import { runMcpCall } from '../../../src/core/mcp/wiring';
import type { TaskEvent } from '../../../src/shared/domain/events';
import type { ToolResultContentBlock } from '../../../src/shared/domain/messages';
import { isCardImageSrc } from '../../../src/shared/domain/toolImages';
import { EVERYTHING, FILESYSTEM, freePort, hubOf, nodeServer, server, tempDir } from './helpers';

/**
 * Keel's hub against the official reference servers, installed as devDependencies and started
 * as real processes: server-everything over stdio, over Streamable HTTP and over SSE (reached
 * through an `http` entry, so through the fallback), and server-filesystem over stdio.
 */
const signal = () => new AbortController().signal;
const text = (c: string | ToolResultContentBlock[]) => (typeof c === 'string' ? c : c.map((b) => (b.type === 'text' ? b.text : `[${b.type}]`)).join('\n'));

describe('server-everything over stdio', () => {
  let hub: McpHub;
  beforeAll(async () => {
    hub = hubOf([server('everything', nodeServer(EVERYTHING, ['stdio']))]).hub;
    await hub.start();
  }, 60_000);
  afterAll(() => hub.dispose());

  it('is ready and offers its tools as mcp__everything__<tool>', async () => {
    const names = (await hub.toolDefinitions()).map((d) => d.name);
    expect(names).toEqual(expect.arrayContaining(['mcp__everything__echo', 'mcp__everything__get-sum', 'mcp__everything__get-tiny-image', 'mcp__everything__trigger-long-running-operation']));
    const def = (await hub.toolDefinitions()).find((d) => d.name === 'mcp__everything__get-sum')!;
    expect(def.input_schema).toMatchObject({ type: 'object', properties: { a: expect.anything(), b: expect.anything() } });
    const status = hub.status()[0]!;
    expect(status).toMatchObject({ phase: 'ready', state: 'ready.idle', via: 'stdio', serverInfo: { name: expect.stringContaining('everything') } });
  });

  it('echo and get-sum answer', async () => {
    expect(await hub.callTool('mcp__everything__echo', { message: 'hello keel' }, { signal: signal() })).toMatchObject({ content: 'Echo: hello keel', isError: false });
    const sum = await hub.callTool('mcp__everything__get-sum', { a: 2, b: 40 }, { signal: signal() });
    expect(text(sum.content)).toContain('42');
  });

  it('reports progress of trigger-long-running-operation while it runs', async () => {
    const lines: string[] = [];
    const out = await hub.callTool('mcp__everything__trigger-long-running-operation', { duration: 1, steps: 3 }, { signal: signal(), onProgress: (l) => lines.push(l) });
    expect(text(out.content)).toContain('Long running operation completed');
    // The last notification may race the result (the SDK drops progress after the response).
    expect(lines.length).toBeGreaterThanOrEqual(2);
    expect(lines).toEqual(['progress 1/3\n', 'progress 2/3\n', 'progress 3/3\n'].slice(0, lines.length));
  });

  it('sends get-tiny-image to the model as an image block', async () => {
    const out = await hub.callTool('mcp__everything__get-tiny-image', {}, { signal: signal() });
    expect(Array.isArray(out.content)).toBe(true);
    const image = (out.content as ToolResultContentBlock[]).find((b) => b.type === 'image');
    expect(image).toMatchObject({ type: 'image', source: { type: 'base64', media_type: 'image/png', data: expect.stringMatching(/^iVBOR/) } });
  });

  it("shows get-tiny-image's image in the tool card as a checked data: URL", async () => {
    const events: TaskEvent[] = [];
    const call = { type: 'tool_use' as const, id: 'c1', name: 'mcp__everything__get-tiny-image', input: {} };
    await runMcpCall({ mcp: hub, publish: (e) => events.push(e) }, 't', call, signal());
    const shown = events.find((e) => e.type === 'tool_images');
    expect(shown).toMatchObject({ type: 'tool_images', id: 'c1', images: [{ src: expect.stringMatching(/^data:image\/png;base64,iVBOR/) }] });
    if (shown?.type === 'tool_images') expect(isCardImageSrc(shown.images[0]!.src)).toBe(true);
    expect(events.filter((e) => e.type === 'tool_output').map((e) => (e.type === 'tool_output' ? e.chunk : '')).join('')).toMatch(/\[image image\/png, about \d+ KB, sent to the model; shown below\]/);
  });

  it('passes structured content and resource links on as text', async () => {
    const structured = await hub.callTool('mcp__everything__get-structured-content', { location: 'New York' }, { signal: signal() });
    expect(text(structured.content)).toMatch(/"temperature":\s*\d+/);
    const links = await hub.callTool('mcp__everything__get-resource-links', { count: 2 }, { signal: signal() });
    expect(text(links.content)).toMatch(/Resource link: .* <demo:\/\/resource\//);
  });

  it('lists resources and prompts, and reads a resource', async () => {
    const status = hub.status()[0]!;
    expect(status.resources.length).toBeGreaterThan(0);
    expect(status.prompts.map((p) => p.name)).toEqual(expect.arrayContaining(['simple-prompt', 'args-prompt']));
    const read = await hub.readResource('everything', status.resources[0]!.uri, signal());
    expect(read.ok && read.contents[0]?.uri).toBe(status.resources[0]!.uri);
  });

  it('a call the model names wrongly is an error result, not a crash', async () => {
    const out = await hub.callTool('mcp__everything__no-such-tool', {}, { signal: signal() });
    expect(out).toMatchObject({ isError: true, content: expect.stringContaining('no MCP tool named') });
  });
});

/** Starts server-everything in an HTTP mode on a free port; resolves once it accepts connections. */
async function everythingHttp(mode: 'streamableHttp' | 'sse'): Promise<{ port: number; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, mode], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      if (/running on port|listening/i.test(d.toString())) resolve();
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server-everything ${mode} exited ${code}`)));
  });
  return { port, child };
}

describe('server-everything over HTTP', () => {
  it('Streamable HTTP: connects, lists and calls', async () => {
    const srv = await everythingHttp('streamableHttp');
    const { hub } = hubOf([server('web', { transport: 'http', url: `http://127.0.0.1:${srv.port}/mcp`, headers: {} })]);
    try {
      await hub.start();
      expect(hub.status()[0]).toMatchObject({ phase: 'ready', via: 'streamableHttp' });
      expect((await hub.toolDefinitions()).map((d) => d.name)).toContain('mcp__web__get-sum');
      const sum = await hub.callTool('mcp__web__get-sum', { a: 1, b: 2 }, { signal: signal() });
      expect(text(sum.content)).toContain('3');
      const lines: string[] = [];
      await hub.callTool('mcp__web__trigger-long-running-operation', { duration: 0.3, steps: 2 }, { signal: signal(), onProgress: (l) => lines.push(l) });
      expect(lines[0]).toBe('progress 1/2\n');
    } finally {
      await hub.dispose();
      srv.child.kill();
    }
  }, 60_000);

  it('an http entry that points at an SSE-only server falls back to SSE', async () => {
    const srv = await everythingHttp('sse');
    const { hub } = hubOf([server('old', { transport: 'http', url: `http://127.0.0.1:${srv.port}/sse`, headers: {} })]);
    try {
      await hub.start();
      expect(hub.status()[0]).toMatchObject({ phase: 'ready', via: 'sse' });
      const echo = await hub.callTool('mcp__old__echo', { message: 'over sse' }, { signal: signal() });
      expect(echo.content).toBe('Echo: over sse');
    } finally {
      await hub.dispose();
      srv.child.kill();
    }
  }, 60_000);
});

describe('server-filesystem over stdio', () => {
  it('reads and lists files of the folder it was given, and refuses others', async () => {
    const root = tempDir('keel-mcp-fs-');
    mkdirSync(join(root, 'src'));
    writeFileSync(join(root, 'src', 'a.txt'), 'alpha\n');
    const { hub } = hubOf([server('fs', nodeServer(FILESYSTEM, [root]))]);
    try {
      const names = (await hub.toolDefinitions()).map((d) => d.name);
      expect(names).toEqual(expect.arrayContaining(['mcp__fs__read_text_file', 'mcp__fs__list_directory']));
      const read = await hub.callTool('mcp__fs__read_text_file', { path: join(root, 'src', 'a.txt') }, { signal: signal() });
      expect(text(read.content)).toContain('alpha');
      const listing = await hub.callTool('mcp__fs__list_directory', { path: join(root, 'src') }, { signal: signal() });
      expect(text(listing.content)).toContain('a.txt');
      const outside = await hub.callTool('mcp__fs__read_text_file', { path: '/etc/hostname' }, { signal: signal() });
      expect(outside.isError).toBe(true);
    } finally {
      await hub.dispose();
    }
  }, 60_000);
});
