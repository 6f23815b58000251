import { describe, expect, it } from "vitest";
import { ident, literal, quoteString, sql } from "./sql.js";

describe("ClickHouse SQL binding", () => {
  it("escapes quotes, backslashes and control characters in strings", () => {
    expect(quoteString("it's")).toBe("'it\\'s'");
    expect(quoteString("a\\b")).toBe("'a\\\\b'");
    expect(quoteString("x\n\t\r\0")).toBe("'x\\n\\t\\r\\0'");
    expect(quoteString("'; DROP TABLE t; --")).toBe("'\\'; DROP TABLE t; --'");
  });

  it("renders values and refuses what has no literal", () => {
    expect(literal(null)).toBe("NULL");
    expect(literal(12n)).toBe("12");
    expect(literal(true)).toBe("1");
    expect(literal([1, "a"])).toBe("[1, 'a']");
    expect(() => literal(Number.NaN)).toThrow(RangeError);
    expect(() => literal({})).toThrow(TypeError);
  });

  it("binds template values and quotes identifiers", () => {
    const name = "x' OR 1=1 --";
    expect(sql`SELECT * FROM ${ident("we`ird")} WHERE n = ${name}`.text).toBe("SELECT * FROM `we\\`ird` WHERE n = 'x\\' OR 1=1 --'");
  });
});
