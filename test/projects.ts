/**
 * Which test files run in which vitest project (vitest.config.mts).
 *
 * - unit: pure logic. No process, no server, no real bash (test/setup/pureUnit.ts refuses them
 *   and fails the test). `npm run test:unit` runs only this project: a few minutes.
 * - integration: everything that starts a process (the CLI, workers, bash, git, rg, bwrap, MCP
 *   servers over stdio) or listens on a socket (the fake model server, MCP over HTTP, the event
 *   bus's socket). test/integration/ plus the files listed below, which sit beside the unit tests
 *   of their area.
 * - e2e: VS Code in code-server, driven by Playwright.
 *
 * A unit test that starts a process fails with a message that names this file: move it here.
 */
export const INTEGRATION_FILES: readonly string[] = [
  'test/unit/agents/statusSocket.test.ts',
  'test/unit/events/busSocket.test.ts',
  'test/unit/events/mcpEvents.test.ts',
  'test/unit/events/workerEvents.test.ts',
  'test/unit/extension/chatSurfaces.test.ts',
  'test/unit/extension/historyController.test.ts',
  'test/unit/extension/loopRegistry.test.ts',
  'test/unit/extension/modelPicker.test.ts',
  'test/unit/extension/permissionPrompts.test.ts',
  'test/unit/extension/workerLostResume.test.ts',
  'test/unit/fake-server/anthropicGrammar.test.ts',
  'test/unit/fake-server/faults.test.ts',
  'test/unit/fake-server/openaiGrammar.test.ts',
  'test/unit/hooks/runner.test.ts',
  'test/unit/hooks/taskHooks.test.ts',
  'test/unit/hooks/workerHooks.test.ts',
  'test/unit/loop/checkpoint.test.ts',
  'test/unit/loop/runner.test.ts',
  'test/unit/machines/taskRuntime.test.ts',
  'test/unit/mcp/approvals.test.ts',
  'test/unit/mcp/backoff.test.ts',
  'test/unit/mcp/config.test.ts',
  'test/unit/mcp/extensionMcp.test.ts',
  'test/unit/mcp/faults.test.ts',
  'test/unit/mcp/machineCalls.test.ts',
  'test/unit/mcp/modelBased.test.ts',
  'test/unit/mcp/oauth.test.ts',
  'test/unit/mcp/referenceServers.test.ts',
  'test/unit/model-based/modelBased.test.ts',
  'test/unit/model-based/sandbox.test.ts',
  'test/unit/model-based/workers.test.ts',
  'test/unit/permissions/cli.test.ts',
  'test/unit/permissions/compositions.property.test.ts',
  'test/unit/permissions/corpus.test.ts',
  'test/unit/permissions/gitRepo.test.ts',
  'test/unit/permissions/options.test.ts',
  'test/unit/permissions/words.test.ts',
  'test/unit/providers/anthropic.test.ts',
  'test/unit/providers/connectionErrors.test.ts',
  'test/unit/providers/demoTour.test.ts',
  'test/unit/providers/leanGlobals.test.ts',
  'test/unit/providers/nodeFetch.test.ts',
  'test/unit/providers/nodeFetchHttps.test.ts',
  'test/unit/providers/openai.test.ts',
  'test/unit/providers/openaiChunks.test.ts',
  'test/unit/sandbox/bwrap.test.ts',
  'test/unit/sandbox/network.test.ts',
  'test/unit/sandbox/proxy.test.ts',
  'test/unit/security/toolEnvironment.test.ts',
  'test/unit/store/runtimeResume.test.ts',
  'test/unit/tools/bash.test.ts',
  'test/unit/tools/glob.test.ts',
  'test/unit/tools/grep.test.ts',
  'test/unit/tools/registry.test.ts',
  'test/unit/tools/webFetch.test.ts',
  'test/unit/webview/mcpSection.test.ts',
  'test/unit/workers/eviction.property.test.ts',
  'test/unit/workers/mcpHost.test.ts',
  'test/unit/workers/mcpIpc.test.ts',
  'test/unit/workers/pool.test.ts',
  'test/unit/workers/resumeAfterWorkerLost.test.ts',
  'test/unit/workers/workerPriority.test.ts',
  'test/unit/workers/workerSweep.test.ts',
  'test/unit/workers/workersStartedTogether.test.ts',
];
