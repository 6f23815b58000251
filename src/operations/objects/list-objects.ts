// list_objects: data objects, newest first, filtered by name prefix and scope.

import { ObjectFilter, ObjectPage } from "../../models/objects.js";
import { listObjects as listRows } from "../../store/data-objects.js";
import { defineOperation } from "../define.js";
import { toObjectViews } from "./object-views.js";

export const listObjects = defineOperation({
  name: "list_objects",
  summary: "List data objects (column-store tables), newest first, filtered by name prefix and scope",
  mutates: false,
  access: "viewer",
  mcp: true,
  usesColumnStore: true,
  input: ObjectFilter,
  output: ObjectPage,
  http: { method: "GET", path: "/objects" },
  cli: { command: "data list", examples: ["jobhouse data list --prefix sales_"], columns: ["name", "scope", "row_count", "size_bytes", "table", "created_at"] },
  async handler(filter, { db, columns }) {
    const { rows, total, nextCursor } = await listRows(db, filter);
    return { items: await toObjectViews(db, await columns(), rows), total, next_cursor: nextCursor };
  },
});
