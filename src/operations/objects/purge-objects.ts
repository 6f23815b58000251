// purge_objects: delete every object matching a non-empty filter (CONTRACT §5).

import { ServiceError, invalid } from "../../core/errors.js";
import { PurgeRequest, PurgeResult } from "../../models/objects.js";
import { MAX_LIMIT } from "../../models/common.js";
import { findAllObjects, findObjectByTable, listObjects } from "../../store/data-objects.js";
import type { DataObjectRow } from "../../store/schema.js";
import { defineOperation } from "../define.js";
import { dropUnderLease, inUseByRunningJob } from "./drop-objects.js";

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
  async handler(filter, ctx) {
    const { db, columns } = ctx;
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
    // What the name holds once a build in progress is done: the version listed, or the one that
    // replaced it (same name and scope), while it still fits the filter's times.
    const fits = (row: DataObjectRow) => (before === undefined || Number(row.created_at) < before) && (after === undefined || Number(row.created_at) > after);
    for (const row of rows) {
      const stillMatched = async () => {
        const current = await findObjectByTable(ctx.db, row.table_name);
        return current && fits(current) && !(await inUseByRunningJob(ctx.db, current)) ? current : undefined;
      };
      try {
        if (await dropUnderLease(ctx, store, row, stillMatched)) deleted.push(row.name);
      } catch (error) {
        // One being rebuilt for longer than a delete waits is left out of `deleted`, not the end of the purge.
        if (!(error instanceof ServiceError && error.code === "name_busy")) throw error;
      }
    }
    return { deleted };
  },
});

function purgeConfirmation(result: PurgeResult): string {
  const names = (list: string[]) => `${list.length} object(s)${list.length ? ": " + list.join(", ") : ""}`;
  return result.would_delete ? `Would delete ${names(result.would_delete)} (dry run: nothing deleted)` : `Deleted ${names(result.deleted)}`;
}
