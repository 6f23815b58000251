import { Readable } from "node:stream";
import { text } from "node:stream/consumers";
import { describe, expect, it } from "vitest";
import { nullEmptyFields } from "./delimited-nulls.js";

/** The file through the transform, fed in chunks of `size` bytes (so state crosses chunk ends). */
const through = async (input: string, nullable: boolean[], delimiter: "," | "\t" = ",", size = 1) => {
  const bytes = Buffer.from(input);
  const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
  return text(Readable.from(chunks).pipe(nullEmptyFields(nullable, delimiter)));
};

describe("empty fields of nullable columns", () => {
  it("become \\N in nullable columns only, past the header", async () => {
    expect(await through("a,b,c\n,,\n1,,3\n", [true, false, true])).toBe("a,b,c\n\\N,,\\N\n1,,3\n");
    expect(await through("a\tb\n\t2\n", [true, true], "\t")).toBe("a\tb\n\\N\t2\n");
  });

  it("leave quoted fields, escaped quotes, delimiters and line ends inside quotes as they are", async () => {
    const csv = 'a,b\n"",x\n"1,""2""\n3",\n';
    expect(await through(csv, [true, true])).toBe('a,b\n"",x\n"1,""2""\n3",\\N\n');
  });

  it("reads TSV's backslash escapes as part of the field, a line feed after a backslash included", async () => {
    expect(await through("a\tb\tc\n1\tx\\\n\t\n", [true, true, false], "\t")).toBe("a\tb\tc\n1\tx\\\n\t\n");
    expect(await through("a\tb\n\\\\\t\n", [true, true], "\t")).toBe("a\tb\n\\\\\t\\N\n");
  });

  it("understands CRLF, blank lines, a last line without its end, and any chunking", async () => {
    for (const size of [1, 2, 3, 64]) {
      expect(await through("a,b\r\n,1\r\n\r\n2,", [true, true], ",", size)).toBe("a,b\r\n\\N,1\r\n\r\n2,\\N");
      expect(await through("a,b\n\u00e9,\n", [true, true], ",", size)).toBe("a,b\n\u00e9,\\N\n");
    }
  });
});
