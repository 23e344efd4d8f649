/** Collection snapshots on kith's port (db/snapshots.ts): descriptions and the recovery body. */
import { Type } from 'typebox';

export const SnapshotInfoSchema = Type.Object({
  name: Type.String({ description: 'The file name: `<collection>-<UTC date and time, to the millisecond>.snapshot`.' }),
  creation_time: Type.String({ description: 'When it was written, UTC, `YYYY-MM-DDTHH:MM:SS` (as Qdrant gives it).' }),
  size: Type.Integer({ minimum: 0, description: 'Bytes.' }),
  checksum: Type.Union([Type.String(), Type.Null()], { description: 'SHA-256 of the file, hexadecimal (null if its checksum file is missing).' }),
});

export const SnapshotParams = Type.Object({
  name: Type.String({ description: 'Collection name (or an alias).' }),
  snapshot: Type.String({ description: 'Snapshot name, as listed.' }),
});

export const DeletedSnapshot = Type.Object({ snapshot: Type.String(), operation: Type.Literal('completed') });

const Checksum = Type.String({ description: 'SHA-256 of the file, hexadecimal: the recovery is refused (400, nothing changed) when the file does not match.' });

export const RecoverSnapshotBody = Type.Object(
  {
    location: Type.String({
      minLength: 1,
      maxLength: 4096,
      description: 'A file:// URL or an absolute path of a snapshot file inside the snapshot directory. kith downloads nothing: an http(s) location is a 400.',
    }),
    checksum: Type.Optional(Type.Union([Checksum, Type.Null()])),
  },
  { additionalProperties: false },
);

export const UploadSnapshotQuery = Type.Object({ checksum: Type.Optional(Checksum) });
