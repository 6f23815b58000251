// purge_objects: delete every object matching a non-empty filter (CONTRACT §5).

import { invalid } from "../../core/errors.js";
import { PurgeRequest, PurgeResult } from "../../models/objects.js";
import { MAX_LIMIT } from "../../models/common.js";
import { findAllObjects, listObjects } from "../../store/data-objects.js";
import { defineOperation } from "../define.js";
import { dropObject } from "../../objects/object-registry.js";
import { inUseByRunningJob } from "./drop-objects.js";

export const purgeObjects = defineOperation({
  name: "purge_objects",
  summary: "Delete every data object matching the filter (prefix, scope, before, after), but the temp objects of jobs still running; an empty filter is refused",
  mutates: true,
  destructive: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  usesColumnStore: true,
  input: PurgeRequest,
  output: PurgeResult,
  http: { method: "POST", path: "/objects:purge" },
  cli: { command: "data purge", examples: ["jobhouse data purge --prefix tmp_ --dry-run", "jobhouse data purge --prefix tmp_"], confirm: purgeConfirmation },
  async handler(filter, { db, columns }) {
    const { prefix, scope, before, after, limit, cursor, dry_run } = filter;
    // One request must not delete everything by accident.
    if (prefix === undefined && scope === undefined && before === undefined && after === undefined) {
      throw invalid("purge needs at least one of prefix, scope, before, after");
    }
    const query = { prefix, scope, beforeMs: before, afterMs: after };
    const rows =
      limit === undefined && cursor === undefined
        ? await findAllObjects(db, query)
        : (await listObjects(db, { ...query, limit: limit ?? MAX_LIMIT, cursor })).rows;
    // A running job's temp objects are left to it (see inUseByRunningJob).
    if (dry_run) {
      const wouldDelete: string[] = [];
      for (const row of rows) if (!(await inUseByRunningJob(db, row))) wouldDelete.push(row.name);
      return { deleted: [], would_delete: wouldDelete };
    }
    const store = await columns();
    const deleted: string[] = [];
    for (const row of rows) if (!(await inUseByRunningJob(db, row)) && (await dropObject(db, store, row))) deleted.push(row.name);
    return { deleted };
  },
});

function purgeConfirmation(result: PurgeResult): string {
  const names = (list: string[]) => `${list.length} object(s)${list.length ? ": " + list.join(", ") : ""}`;
  return result.would_delete ? `Would delete ${names(result.would_delete)} (dry run: nothing deleted)` : `Deleted ${names(result.deleted)}`;
}
