/**
 * The layering rule of ARCHITECTURE.md, enforced on every build:
 * shared imports nothing of ours (and no runtime); core never imports vscode;
 * webview imports only src/shared (and browser packages), never vscode.
 */
module.exports = {
  forbidden: [
    {
      name: 'no-vscode-outside-extension',
      severity: 'error',
      comment: "Only src/extension may import 'vscode'; core, shared and webview must run without VS Code.",
      from: { path: '^(src/(core|shared|cli)|webview)/' },
      to: { path: '^vscode$' },
    },
    {
      name: 'no-vscode-outside-extension-unresolved',
      severity: 'error',
      comment: "Only src/extension may import 'vscode'.",
      from: { path: '^(src/(core|shared|cli)|webview)/' },
      to: { couldNotResolve: true, path: '^vscode$' },
    },
    {
      name: 'shared-is-leaf',
      severity: 'error',
      comment: 'src/shared is runtime-neutral: it imports nothing else of ours and no Node built-in.',
      from: { path: '^src/shared/' },
      to: { path: '^(src/(core|extension|cli)|webview)/|^node:|^(fs|path|os|child_process|http|https|net|crypto|stream|events|util)$' },
    },
    {
      name: 'core-not-on-hosts',
      severity: 'error',
      comment: 'src/core is used by the extension and the CLI, never the other way round.',
      from: { path: '^src/core/' },
      to: { path: '^(src/(extension|cli)|webview)/' },
    },
    {
      name: 'webview-only-shared',
      severity: 'error',
      comment: 'webview/ talks to the host only through src/shared; it imports no other folder of ours.',
      from: { path: '^webview/' },
      to: { path: '^(src/(core|extension|cli)|test|bench|scripts)/|^node:' },
    },
    {
      name: 'webview-no-node-builtins',
      severity: 'error',
      from: { path: '^webview/' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'no-circular-core',
      severity: 'warn',
      from: { path: '^src/' },
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '(^|/)node_modules/|\\.test\\.tsx?$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'], extensions: ['.ts', '.tsx', '.js', '.mjs', '.cjs', '.json'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
