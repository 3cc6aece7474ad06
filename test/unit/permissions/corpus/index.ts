import { BASE_GROUP } from './base';
import { BOUNDS_GROUP } from './bounds';
import { PATHS_GROUP } from './paths';
import { SYMLINKS_GROUP } from './symlinks';
import type { CorpusGroup } from './types';

/**
 * Every group of the permission corpus. corpus.test.ts checks each case's decision (and, where a
 * case carries `realBash`, what real bash does with it); bench/permissions.bench.ts times them.
 * Add a group in its own file and list it here.
 */
export const CORPUS: CorpusGroup[] = [BASE_GROUP, PATHS_GROUP, SYMLINKS_GROUP, BOUNDS_GROUP];
