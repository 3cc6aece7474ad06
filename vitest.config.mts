import { readFileSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

/** test/integration-files.txt: the integration tests that sit beside unit tests (one path a line). */
const INTEGRATION_FILES = readFileSync(new URL('./test/integration-files.txt', import.meta.url), 'utf8')
  .split('\n')
  .map((l) => l.replace(/#.*/, '').trim())
  .filter(Boolean);

// Three projects (test/integration-files.txt says which unit-folder files are integration tests):
//   unit         pure logic, no process, no server (test/setup/pureUnit.ts enforces it)
//   integration  real processes and sockets: the CLI, workers, bash, MCP servers, the fake model server
//   e2e          the packaged extension in code-server, driven by Playwright
// On a 2-core machine vitest would run one file at a time (cores - 1). Integration files mostly
// wait on their child processes, so two run side by side; unit files are CPU-bound, two as well.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: 'unit',
          include: ['test/unit/**/*.test.ts', 'src/**/*.test.ts'],
          exclude: [...INTEGRATION_FILES],
          globalSetup: ['test/setup/propertySeed.global.ts'],
          setupFiles: ['test/setup/pureUnit.ts', 'test/setup/propertySeed.ts'],
          environment: 'node',
          testTimeout: 30_000,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts', ...INTEGRATION_FILES],
          globalSetup: ['test/setup/propertySeed.global.ts'],
          setupFiles: ['test/setup/propertySeed.ts'],
          environment: 'node',
          testTimeout: 30_000,
          maxWorkers: 2,
        },
      },
      {
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts'],
          environment: 'node',
          testTimeout: 300_000,
          hookTimeout: 600_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
