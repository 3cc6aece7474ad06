/** Variables whose value changes what a later command runs or loads. */
const DANGEROUS_EXACT = new Set([
  'PATH', 'IFS', 'BASH_ENV', 'ENV', 'NODE_OPTIONS', 'NODE_PATH', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND', 'CDPATH', 'GLOBIGNORE',
  'PAGER', 'MANPAGER', 'GIT_PAGER', 'EDITOR', 'VISUAL', 'BROWSER', 'LESSOPEN', 'LESSCLOSE', 'HOME', 'ZDOTDIR', 'SSH_ASKPASS', 'SUDO_ASKPASS',
  'JAVA_TOOL_OPTIONS', '_JAVA_OPTIONS', 'JDK_JAVA_OPTIONS', 'RUSTC_WRAPPER', 'CARGO_BUILD_RUSTC_WRAPPER', 'MAKEFLAGS', 'TERMINFO', 'HISTFILE', 'BASH_XTRACEFD', 'XDG_CONFIG_HOME',
  'OLDPWD', 'PWD',
]);
const DANGEROUS_PREFIX = ['LD_', 'DYLD_', 'GIT_', 'NPM_CONFIG_', 'YARN_', 'PYTHON', 'PERL', 'RUBY', 'BASH_FUNC_', 'GCONV_', 'DOTNET_', 'COMPOSER_', 'BUN_', 'DENO_'];

/** True for a variable whose assignment can change what runs. */
export function isDangerousVariable(name: string): boolean {
  const up = name.toUpperCase();
  return DANGEROUS_EXACT.has(up) || DANGEROUS_PREFIX.some((p) => up.startsWith(p));
}
