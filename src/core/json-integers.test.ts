import { describe, expect, it } from "vitest";
import { firstLossyNumber, lossyNumberMessage, parseJsonExactly } from "./json-integers.js";

describe("firstLossyNumber on integers", () => {
  it("finds integer literals past 2^53 outside strings, and nothing else", () => {
    expect(firstLossyNumber('{"id": 9007199254740993}')).toBe("9007199254740993");
    expect(firstLossyNumber('{"a": [1, -12345678901234567890]}')).toBe("-12345678901234567890");
    expect(firstLossyNumber('{"id": 9007199254740991, "b": -9007199254740991}')).toBeNull();
    expect(firstLossyNumber('{"big": 6.02e23, "f": 12345678901234567.5, "e": 1E400}')).toBeNull();
    expect(firstLossyNumber('{"text": "12345678901234567890", "esc": "a\\"12345678901234567890"}')).toBeNull();
    expect(firstLossyNumber('{"12345678901234567890": 1}')).toBeNull();
    expect(firstLossyNumber("")).toBeNull();
  });
});

// Found by trying the product: 1e-400 in kwargs was stored as 0 in silence.
describe("firstLossyNumber", () => {
  it("finds numbers JSON.parse changes: integers past 2^53 and non-zero numbers that underflow to 0", () => {
    expect(firstLossyNumber('{"x": 1e-400}')).toBe("1e-400");
    expect(firstLossyNumber('{"x": [0, -2.5E-999]}')).toBe("-2.5E-999");
    expect(firstLossyNumber(`{"x": 0.${"0".repeat(330)}1}`)).toBe(`0.${"0".repeat(330)}1`);
    expect(firstLossyNumber('{"id": 9007199254740993, "x": 1e-400}')).toBe("9007199254740993");
    // Found by review: many zeros after the point and a small exponent, past the first filter.
    expect(firstLossyNumber(`{"x": 0.${"0".repeat(224)}1e-99}`)).toBe(`0.${"0".repeat(224)}1e-99`);
    expect(firstLossyNumber('{"x": -1E-0400}')).toBe("-1E-0400");
    for (const kept of ['{"x": 1e-300, "y": 5e-324, "z": -0, "w": 0e-500, "v": 0.0}', '{"s": "1e-400"}', '{"1e-400": 1}', "[]"]) expect(firstLossyNumber(kept), kept).toBeNull();
    expect(lossyNumberMessage("1e-400")).toBe("the number 1e-400 is too small for a JSON number here: it would be read as 0");
    expect(lossyNumberMessage("9007199254740993")).toMatch(/^the number 9007199254740993 is an integer past 2\^53/);
  });
});

describe("parseJsonExactly", () => {
  it("reads integer values past 2^53 as bigints, everything else as JSON.parse does", () => {
    expect(parseJsonExactly('{"a":9007199254740993,"b":[1,-9223372036854775808],"s":"9007199254740993","f":1.5e300}')).toEqual({
      a: 9007199254740993n,
      b: [1, -9223372036854775808n],
      s: "9007199254740993",
      f: 1.5e300,
    });
    expect(parseJsonExactly('{"a":1}')).toEqual({ a: 1 });
  });

  // Found by a review: leading zeros and a number where a key goes were taken as valid.
  it("refuses what JSON.parse refuses", () => {
    expect(() => parseJsonExactly('{"id": 0012345678901234567}')).toThrow(SyntaxError);
    expect(() => parseJsonExactly("{12345678901234567890: 1}")).toThrow(SyntaxError);
  });
});
