/** Aliases on kith's port (db/aliases.ts): the change body and the listings. */
import { Type } from 'typebox';
import { MAX_ALIAS_ACTIONS } from '../../db/aliases.js';

const Name = (description: string) => Type.String({ minLength: 1, maxLength: 255, description });

export const AliasInfoSchema = Type.Object({
  alias: Name('The alias.'),
  collection: Name('The collection it names.'),
});

export const AliasList = Type.Array(AliasInfoSchema, { description: 'Sorted by alias.' });

export const ChangeAliasesBody = Type.Object(
  {
    actions: Type.Array(
      Type.Union([
        Type.Object(
          {
            create: Type.Object(
              { alias: Name('The new alias (or one to point elsewhere).'), collection: Name('The collection it is to name.') },
              { additionalProperties: false },
            ),
          },
          { additionalProperties: false },
        ),
        Type.Object(
          { delete: Type.Object({ alias: Name('The alias to delete; one that does not exist is no error.') }, { additionalProperties: false }) },
          { additionalProperties: false },
        ),
        Type.Object(
          { rename: Type.Object({ from: Name('The alias to rename.'), to: Name('Its new name.') }, { additionalProperties: false }) },
          { additionalProperties: false },
        ),
      ]),
      { maxItems: MAX_ALIAS_ACTIONS, description: 'Applied in order, all or nothing.' },
    ),
  },
  { additionalProperties: false },
);

export const ChangeAliasesResult = Type.Object({ operation: Type.Literal('completed'), aliases: AliasList });
