// Dropping objects from operations: the table first, then its registry row (a guarded delete, so
// a racing delete of the same object reports "not found" instead of a false success).

import { notFound } from "../../core/errors.js";
import type { ColumnStore } from "../../data/client.js";
import { dropObject } from "../../objects/object-registry.js";
import type { Store } from "../../store/db.js";
import type { DataObjectRow } from "../../store/schema.js";

export async function dropObjectOrFail(db: Store, columns: ColumnStore, row: DataObjectRow): Promise<void> {
  if (!(await dropObject(db, columns, row))) throw notFound(`data object "${row.name}" was deleted meanwhile`);
}
