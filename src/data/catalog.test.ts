import { describe, expect, it } from "vitest";
import { describeColumn } from "./catalog.js";

describe("describeColumn", () => {
  it.each([
    ["String", { type: "String", nullable: false, arrayDepth: 0, lowCardinality: false }],
    ["Nullable(Int64)", { type: "Int64", nullable: true, arrayDepth: 0, lowCardinality: false }],
    ["Array(Array(Nullable(String)))", { type: "String", nullable: true, arrayDepth: 2, lowCardinality: false }],
    ["LowCardinality(Nullable(String))", { type: "String", nullable: true, arrayDepth: 0, lowCardinality: true }],
    ["Array(LowCardinality(String))", { type: "String", nullable: false, arrayDepth: 1, lowCardinality: true }],
    ["DateTime('UTC')", { type: "DateTime('UTC')", nullable: false, arrayDepth: 0, lowCardinality: false }],
  ])("%s", (type, expected) => {
    expect(describeColumn("c", type)).toEqual({ name: "c", ...expected });
  });
});
