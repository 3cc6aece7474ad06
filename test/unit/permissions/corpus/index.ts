import { BASE_GROUP } from './base';
import { ENV_GROUPS } from './envAssignments';
import { GIT_GROUPS } from './gitForms';
import { INLINE_GROUPS } from './inlineOptions';
import { READONLY_GROUPS } from './readOnlyFlags';
import type { CorpusGroup } from './types';
import { WRAPPER_GROUPS } from './wrappers';

/**
 * Every group of the permission corpus. corpus.test.ts checks each case's decision (and, where a
 * case carries `realBash`, what real bash does with it); bench/permissions.bench.ts times them.
 * Add a group in its own file and list it here.
 */
export const CORPUS: CorpusGroup[] = [BASE_GROUP, ...WRAPPER_GROUPS, ...READONLY_GROUPS, ...ENV_GROUPS, ...GIT_GROUPS, ...INLINE_GROUPS];
