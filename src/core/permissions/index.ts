/**
 * The permission engine: rules in Claude Code's syntax, settings files, a bash parser, modes and
 * precedence. Hosts call `createPermissionEngine` once per workspace and `decide` per tool call.
 */
export { createPermissionEngine, combine, type EngineDecision, type EngineOptions, type PermissionCall, type PermissionEngine } from './engine';
export { denyingAsker, type PermissionAnswer, type PermissionAsker, type PermissionRequest } from './gate';
export { parseRule, type PermissionRule } from './rules';
export { saveRule, suggestRule, suggestRules, type SaveRuleOptions } from './persist';
