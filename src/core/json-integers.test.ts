import { describe, expect, it } from "vitest";
import { firstInexactInteger } from "./json-integers.js";

describe("firstInexactInteger", () => {
  it("finds integer literals past 2^53 outside strings, and nothing else", () => {
    expect(firstInexactInteger('{"id": 9007199254740993}')).toBe("9007199254740993");
    expect(firstInexactInteger('{"a": [1, -12345678901234567890]}')).toBe("-12345678901234567890");
    expect(firstInexactInteger('{"id": 9007199254740991, "b": -9007199254740991}')).toBeNull();
    expect(firstInexactInteger('{"big": 6.02e23, "f": 12345678901234567.5, "e": 1E400}')).toBeNull();
    expect(firstInexactInteger('{"text": "12345678901234567890", "esc": "a\\"12345678901234567890"}')).toBeNull();
    expect(firstInexactInteger('{"12345678901234567890": 1}')).toBeNull();
    expect(firstInexactInteger("")).toBeNull();
  });
});
