import { describe, expect, it } from "vitest";
import { createLogger } from "./log.js";
import { logLineText, visibleBidi, visibleControls } from "./control-chars.js";

const hostile = "\u001b[2J\u001b[31mFAKE\u001b]0;pwned\u0007 \r\n  hidden\u009b1m";

describe("control characters from outside", () => {
  it("are written as visible escapes, tab and newline kept", () => {
    expect(visibleControls(hostile)).toBe("\\x1b[2J\\x1b[31mFAKE\\x1b]0;pwned\\x07 \\x0d\n  hidden\\x9b1m");
    expect(visibleControls("a\tb\nc é ✓")).toBe("a\tb\nc é ✓");
  });

  // Found by trying the product: "\u202eevil RTL" showed as "LTR live".
  it("shows the characters that reorder text as escapes, on a terminal and in the web app", () => {
    expect(visibleControls("ok \u202eevil\u202c \u2067x\u2069")).toBe("ok \\u202eevil\\u202c \\u2067x\\u2069");
    expect(visibleBidi("\u202e\u001b")).toBe("\\u202e\u001b");
    expect(visibleBidi("שלום\u200f!")).toBe("שלום\u200f!");
  });

  it("cannot forge a record of a text log: each further line is indented", () => {
    const lines: string[] = [];
    createLogger("info", (line) => lines.push(line)).warn(`task failed: boom\n2026-11-24T00:00:00.000Z INFO forged\u001b[2K`);
    const written = lines.join("").split("\n").filter((line) => line !== "");
    expect(written).toHaveLength(2);
    expect(written[1]).toBe("  2026-11-24T00:00:00.000Z INFO forged\\x1b[2K");
    expect(logLineText("one")).toBe("one");
  });
});
