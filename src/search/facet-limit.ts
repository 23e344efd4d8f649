/** At most this many values in one facet answer (a search's largest `limit`); apart from facet.ts so that schemas (and the dashboard) can read it. */
export const MAX_FACET_LIMIT = 10_000;
