// delete_object: drop one object's table and its registry row (CONTRACT §5: 204, 404 if absent).

import { z } from "zod";
import { notFound } from "../../core/errors.js";
import { NoContent } from "../../models/common.js";
import { ObjectName } from "../../models/objects.js";
import { findObject } from "../../store/data-objects.js";
import { defineOperation } from "../define.js";
import { dropObjectOrFail, inUseByRunningJob, tempInUse } from "./drop-objects.js";

export const deleteObject = defineOperation({
  name: "delete_object",
  summary: "Delete a data object: drop its table and its registry entry",
  mutates: true,
  destructive: true,
  idempotent: true,
  access: "admin",
  mcp: true,
  usesColumnStore: true,
  input: z.object({ name: ObjectName }),
  output: NoContent,
  http: { method: "DELETE", path: "/objects/:name", status: 204 },
  cli: { command: "data delete <name>", examples: ["jobhouse data delete sales_by_region"], confirm: () => "Deleted" },
  async handler({ name }, { db, columns }) {
    const row = await findObject(db, name);
    if (!row) throw notFound(`no data object is named "${name}"`);
    if (await inUseByRunningJob(db, row)) throw tempInUse(row);
    await dropObjectOrFail(db, await columns(), row);
    return undefined;
  },
});
