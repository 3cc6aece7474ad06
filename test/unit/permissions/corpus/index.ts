import { BASE_GROUP } from './base';
import { BOUNDS_GROUP } from './bounds';
import { BUILD_TOOL_GROUP } from './buildTools';
import { ENV_GROUPS } from './envAssignments';
import { FILE_COMMAND_GROUPS } from './fileCommands';
import { GIT_GROUPS } from './gitForms';
import { GIT_RUNNER_GROUPS } from './gitRunners';
import { HOLES_GROUPS } from './holes';
import { INLINE_GROUPS } from './inlineOptions';
import { NEEDLESS_REFUSAL_GROUP } from './needlessRefusals';
import { PATHS_GROUP } from './paths';
import { PROTECTED_PLACE_GROUP } from './protectedPlaces';
import { READONLY_GROUPS } from './readOnlyFlags';
import { RECURSIVE_READ_GROUPS } from './recursiveReads';
import { SHELL_FORM_GROUPS } from './shellForms';
import { SYMLINKS_GROUP } from './symlinks';
import type { CorpusGroup } from './types';
import { WRAPPER_GROUPS } from './wrappers';

/**
 * Every group of the permission corpus. corpus.test.ts checks each case's decision (and, where a
 * case carries `realBash`, what real bash does with it); bench/permissions.bench.ts times them.
 * Add a group in its own file and list it here.
 */
export const CORPUS: CorpusGroup[] = [BASE_GROUP, ...WRAPPER_GROUPS, ...READONLY_GROUPS, ...ENV_GROUPS, ...GIT_GROUPS, ...INLINE_GROUPS, PATHS_GROUP, SYMLINKS_GROUP, ...HOLES_GROUPS, ...GIT_RUNNER_GROUPS, ...FILE_COMMAND_GROUPS, ...RECURSIVE_READ_GROUPS, ...SHELL_FORM_GROUPS, NEEDLESS_REFUSAL_GROUP, PROTECTED_PLACE_GROUP, BUILD_TOOL_GROUP, BOUNDS_GROUP];
