/**
 * Qdrant's `{formula, defaults}` query parsed into the engine's formula: the grammar is
 * search/formula-parse.ts's (kith's port reads the same expressions); this file gives it Qdrant's
 * error wording (400 format errors, 422 validation errors) and Qdrant's filter conditions.
 */
import { childPath } from '../../core/field-path.js';
import type { Filter } from '../../payload/filter-types.js';
import type { Formula } from '../../search/formula.js';
import { type FormulaDialect, parseFormula } from '../../search/formula-parse.js';
import { formatError, validationError } from './errors.js';
import { parseQdrantFilter } from './filter.js';

const QDRANT_FORMULAS: FormulaDialect = {
  malformed: formatError,
  invalid: validationError,
  condition: (body, path) => parseQdrantFilter({ must: [body] }, path) as Filter,
};

/** `{formula, defaults}` at `path` (a query). */
export function parseFormulaQuery(raw: Record<string, unknown>, path: string): Formula {
  return parseFormula(QDRANT_FORMULAS, raw.formula, childPath(path, 'formula'), raw.defaults, childPath(path, 'defaults'));
}
