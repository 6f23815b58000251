// get_object: one data object with its table schema and lineage summary.

import { z } from "zod";
import { ObjectDetail, ObjectRef } from "../../models/objects.js";
import { defineOperation } from "../define.js";
import { requireObject } from "../lookups.js";
import { toObjectDetail } from "./object-views.js";

export const getObject = defineOperation({
  name: "get_object",
  summary: "Get a data object by name, table name or id, with its schema and lineage summary",
  mutates: false,
  access: "viewer",
  mcp: true,
  usesColumnStore: true,
  input: z.object({ name: ObjectRef }),
  output: ObjectDetail,
  http: { method: "GET", path: "/objects/:name" },
  cli: { command: "data get <name>", examples: ["jobhouse data get sales_by_region", "jobhouse data get sales_by_region --output json"], view: "lineage" },
  async handler({ name }, { db, columns }) {
    return toObjectDetail(db, await columns(), await requireObject(db, name));
  },
});
