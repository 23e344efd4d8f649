/** The bounds of grouped searches (groups.ts), apart so that the request schemas (and the dashboard) read them without the engine. */

/** At most this many searches answer one grouped request. */
export const MAX_GROUP_ROUNDS = 16;
/** groups × group_size at most: every round may ask for that many hits, and all rounds are counted. */
export const MAX_GROUPED_HITS = 8192;
/** Hits per group, and groups, when a request does not say (Qdrant's query/groups defaults). */
export const DEFAULT_GROUP_SIZE = 3;
export const DEFAULT_GROUPS = 10;
