import type { TrustView } from '../../../src/core/trust/items';

/**
 * For tests about what a workspace's settings do once the person approved them: every item of
 * the workspace counts as approved. Production code never has such a view (docs/permissions.md,
 * "Trust"); tests of the trust model itself use real approvals (test/unit/trust/).
 */
export const TRUST_EVERYTHING: TrustView = { approves: () => true, version: () => 0 };
