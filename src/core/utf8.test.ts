import { describe, expect, it } from "vitest";
import { leadingContinuationBytes, wholeCharactersEnd } from "./utf8.js";

describe("utf8 cuts", () => {
  const text = Buffer.from("a日b😀c", "utf8"); // a(1) 日(3) b(1) 😀(4) c(1)

  it("never cuts inside a character", () => {
    for (let end = 0; end <= text.length; end++) {
      const cut = wholeCharactersEnd(text, end);
      expect(cut).toBeLessThanOrEqual(end);
      expect(text.subarray(0, cut).toString("utf8")).not.toContain("\uFFFD");
      expect(end - cut).toBeLessThan(4);
    }
    expect(wholeCharactersEnd(text, 3)).toBe(1);
    expect(wholeCharactersEnd(text, 4)).toBe(4);
    expect(wholeCharactersEnd(text, 8)).toBe(5);
    expect(wholeCharactersEnd(text, 9)).toBe(9);
  });

  it("skips the rest of a character a read started inside", () => {
    for (let start = 0; start < text.length; start++) {
      const rest = text.subarray(start);
      expect(rest.subarray(leadingContinuationBytes(rest)).toString("utf8")).not.toContain("\uFFFD");
    }
    expect(leadingContinuationBytes(text.subarray(2))).toBe(2);
  });
});
