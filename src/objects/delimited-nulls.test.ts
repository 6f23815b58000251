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

describe("columns written anew", () => {
  const bool = (text: string) => (text === "" ? "\\N" : text === "true" ? "1" : text === "false" ? "0" : text);
  const rewrite = async (input: string, rewrites: (((t: string) => string) | null)[], size: number, delimiter: "," | "\t" = ",") => {
    const bytes = Buffer.from(input);
    const chunks = Array.from({ length: Math.ceil(bytes.length / size) }, (_, i) => bytes.subarray(i * size, (i + 1) * size));
    return text(Readable.from(chunks).pipe(nullEmptyFields(rewrites.map(() => false), delimiter, [], rewrites)));
  };

  it("replace each field of the column, quoted or not, however the file is cut, the header kept", async () => {
    const keep = null;
    for (const size of [1, 2, 3, 5, 64]) {
      expect(await rewrite('id,flag\n1,true\n2,"false"\r\n3,\n4,true', [keep, bool], size), `size ${size}`).toBe('id,flag\n1,1\n2,0\r\n3,\\N\n4,1');
      expect(await rewrite('flag,s\ntrue,"a\nb"\nfalse,x\n', [bool, keep], size), `size ${size}`).toBe('flag,s\n1,"a\nb"\n0,x\n');
      expect(await rewrite("flag\tn\ntrue\t1\n\t2\n", [bool, keep], size, "\t"), `size ${size}`).toBe("flag\tn\n1\t1\n\\N\t2\n");
    }
  });

  // Found by a review: the held-back field of a quote never closed vanished, and the rows with it.
  it("refuse a quote never closed rather than drop what follows it", async () => {
    for (const size of [1, 64]) {
      await expect(rewrite('flag,s\ntrue,x\n"true,y\nfalse,z\n', [bool, null], size)).rejects.toThrow(/row 2: a quoted field is not closed at the end of the file/);
      await expect(rewrite('s,flag\nx,true\ny,"tru', [null, bool], size)).rejects.toThrow(/row 2: a quoted field is not closed/);
    }
  });
});
