import { describe, expect, it } from "vitest";
import { featuresOf, inferType, normalizeType, toJsonValue } from "./types.js";

const modern = featuresOf("26.7.1");
const old = featuresOf("18.16.1");

describe("column types", () => {
  it("infers from values", () => {
    expect(inferType([1, 2, 3], modern)).toBe("Int64");
    expect(inferType([1, 2.5], modern)).toBe("Float64");
    expect(inferType(["a", null], modern)).toBe("Nullable(String)");
    expect(inferType([true, false], modern)).toBe("Bool");
    expect(inferType([true, false], old)).toBe("UInt8");
    expect(inferType([new Date()], modern)).toBe("DateTime('UTC')");
    expect(inferType([[1, 2], [], null], modern)).toBe("Array(Int64)");
    expect(inferType([[["a"]]], modern)).toBe("Array(Array(String))");
    expect(inferType([null, null], modern)).toBe("Nullable(String)");
    expect(() => inferType([1, "a"], modern)).toThrow(/mixed values/);
  });

  it("validates overrides and gates features by version", () => {
    expect(normalizeType("LowCardinality( String )", modern)).toBe("LowCardinality(String)");
    expect(normalizeType("Nullable(Decimal(18,2))", modern)).toBe("Nullable(Decimal(18, 2))");
    expect(normalizeType("Bool", old)).toBe("UInt8");
    expect(() => normalizeType("String) ENGINE = Memory; DROP TABLE x; --", modern)).toThrow(/unknown column type/);
    expect(() => normalizeType("Map(String, String)", modern)).toThrow(/unknown column type/);
    // Found by trying the product: these reached the engine, which refused them in its own words.
    expect(normalizeType("Decimal(76,10)", modern)).toBe("Decimal(76, 10)");
    expect(() => normalizeType("Decimal(76,10)", old)).toThrow(/P from 1 to 38/);
    expect(() => normalizeType("Decimal(10,12)", modern)).toThrow(/S from 0 to P/);
    expect(() => normalizeType("Decimal(0,0)", modern)).toThrow(/P from 1 to 76/);
    expect(() => normalizeType("Nullable(Array(Int64))", modern)).toThrow(/Array cannot be inside Nullable/);
    expect(() => normalizeType("Nullable(Nullable(Int64))", modern)).toThrow(/Nullable cannot be inside Nullable/);
  });

  it("converts values for JSONEachRow", () => {
    expect(toJsonValue(new Date("2026-11-22T10:00:00.123Z"), "DateTime('UTC')")).toBe("2026-11-22 10:00:00");
    expect(toJsonValue(2n ** 62n, "Int64")).toBe("4611686018427387904");
    expect(toJsonValue(true, "UInt8")).toBe(1);
    expect(toJsonValue(null, "Array(String)")).toEqual([]);
  });

  it("reads versions", () => {
    expect(old).toEqual({ bool: false, lowCardinalityNeedsSetting: true, parquet: false, exchangeTables: false, sessionTimezone: false, decimal256: false });
    expect(modern).toEqual({ bool: true, lowCardinalityNeedsSetting: false, parquet: true, exchangeTables: true, sessionTimezone: true, decimal256: true });
  });
});
