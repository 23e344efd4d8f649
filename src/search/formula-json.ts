/**
 * A formula's expression as JSON (search/formula-parse.ts reads it): a number, a variable
 * (`$score`, `$score[i]`, a payload key), or an object naming one operator or a filter condition.
 * Its own module, free of imports, so that the API schemas (which the dashboard compiles) can name it.
 */
export type FormulaJson = number | string | { readonly [key: string]: unknown };
