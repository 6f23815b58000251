// delete_object: drop one object's table and its registry row (CONTRACT §5: 204, 404 if absent).

import { z } from "zod";
import { NoContent } from "../../models/common.js";
import { ObjectRef } from "../../models/objects.js";
import { defineOperation } from "../define.js";
import { requireObject } from "../lookups.js";
import { dropUnderLease, inUseByRunningJob, tempInUse } from "./drop-objects.js";
import { notFound } from "../../core/errors.js";

export const deleteObject = defineOperation({
  name: "delete_object",
  summary: "Delete a data object (by name, table name or id): drop its table and its registry entry",
  mutates: true,
  destructive: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  usesColumnStore: true,
  // The refs get_object takes: an id it showed could not be deleted.
  input: z.object({ name: ObjectRef }),
  output: NoContent,
  http: { method: "DELETE", path: "/objects/:name", status: 204 },
  cli: { command: "data delete <name>", examples: ["jobhouse data delete sales_by_region"], confirm: () => "Deleted" },
  async handler({ name }, ctx) {
    const usable = async () => {
      const row = await requireObject(ctx.db, name);
      if (await inUseByRunningJob(ctx.db, row)) throw tempInUse(row);
      return row;
    };
    // Looked up again under the name's lease: a replacement in progress finishes first.
    const row = await usable();
    if (!(await dropUnderLease(ctx, await ctx.columns(), row, usable))) throw notFound(`data object "${row.name}" was deleted meanwhile`);
    return undefined;
  },
});
