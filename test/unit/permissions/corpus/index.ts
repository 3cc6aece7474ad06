import { BASE_GROUP } from './base';
import { BOUNDS_GROUP } from './bounds';
import { ENV_GROUPS } from './envAssignments';
import { GIT_GROUPS } from './gitForms';
import { HOLES_GROUPS } from './holes';
import { INLINE_GROUPS } from './inlineOptions';
import { PATHS_GROUP } from './paths';
import { READONLY_GROUPS } from './readOnlyFlags';
import { SYMLINKS_GROUP } from './symlinks';
import type { CorpusGroup } from './types';
import { WRAPPER_GROUPS } from './wrappers';

/**
 * Every group of the permission corpus. corpus.test.ts checks each case's decision (and, where a
 * case carries `realBash`, what real bash does with it); bench/permissions.bench.ts times them.
 * Add a group in its own file and list it here.
 */
export const CORPUS: CorpusGroup[] = [BASE_GROUP, ...WRAPPER_GROUPS, ...READONLY_GROUPS, ...ENV_GROUPS, ...GIT_GROUPS, ...INLINE_GROUPS, PATHS_GROUP, SYMLINKS_GROUP, ...HOLES_GROUPS, BOUNDS_GROUP];
