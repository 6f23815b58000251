// Empty fields of nullable columns in a CSV or TSV file, written as `\N` before ClickHouse reads
// them. chDB reads an empty CSV field of a Nullable column as null and refuses an empty TSV number;
// ClickHouse 18.16 stores 0 or "" for both. `\N` is null to every engine, in both formats, so the
// same file loads as the same data everywhere. The same pass checks each field of a column given a
// check (see checkDelimitedText), which ClickHouse would otherwise store changed.

import { StringDecoder } from "node:string_decoder";
import { Transform, type TransformCallback } from "node:stream";

const NULL = "\\N";

/** A column's check of one field's text (unquoted; TSV escapes as written); throws to refuse it, naming the column. */
export type FieldCheck = ((text: string) => void) | null;

/**
 * A column whose fields are written anew: the field's text (unquoted, after its check) in, the
 * text ClickHouse reads out (written unquoted, so it must need no quotes). ClickHouse 18.16 has no
 * Bool: a `true` there is written `1`.
 */
export type FieldRewrite = ((text: string) => string) | null;

/**
 * A stream that passes a delimited file through, writing `\N` into each empty unquoted field of a
 * column marked nullable (the header line is left as it is), and running each column's check on
 * its fields (the stream fails with the first refusal, naming its row). CSV quoting ("a,b", ""
 * inside quotes), TSV's backslash escapes (a line feed after a backslash is part of the field) and
 * CRLF line ends are understood; a quoted empty CSV field ("") stays an empty text.
 */
export function nullEmptyFields(nullable: readonly boolean[], delimiter: "," | "\t", checks: readonly FieldCheck[] = [], rewrites: readonly FieldRewrite[] = []): Transform {
  const decoder = new StringDecoder("utf8");
  const quoting = delimiter === ",";
  let header = true;
  let column = 0;
  /** Characters of the current field seen so far (0: it is empty up to here). */
  let fieldLength = 0;
  let inQuotes = false;
  /** Inside quotes, the last character was a quote: the field ends here or it was an escaped "". */
  let quotePending = false;
  let afterCR = false;
  /** TSV: the last character was a backslash, so this one is part of the field (\t, \n, a real line feed). */
  let escaped = false;
  /** The current field's text, kept only for a column with a check. */
  let field = "";
  /** Records past the header, for messages (a quoted field may span lines, so not the line number). */
  let row = 0;
  /** Where the current field began in the text being scanned (0 for one that began in an earlier piece). */
  let fieldBegin = 0;
  const rewriting = () => !header && rewrites[column] != null;
  const collecting = () => !header && (checks[column] != null || rewrites[column] != null);
  /** The field just ended: checked, when its column has a check. */
  const checkField = () => {
    const check = header ? null : checks[column];
    if (check) {
      try {
        check(field);
      } catch (error) {
        throw new Error(`row ${row + 1}, ${(error as Error).message}`);
      }
    }
  };

  /** The field just ended is an empty one of a nullable column, past the header (blank lines are skipped by callers). */
  const endedEmptyNullable = () => !header && fieldLength === 0 && nullable[column] === true && rewrites[column] == null;

  const scan = (text: string): string => {
    let out = "";
    let from = 0;
    fieldBegin = 0;
    const emptyHere = (i: number) => {
      if (endedEmptyNullable()) {
        out += text.slice(from, i) + NULL;
        from = i;
      }
    };
    /** The field ended at i: checked, then its text replaced if its column is written anew. */
    const endField = (i: number) => {
      checkField();
      if (rewriting()) {
        out += text.slice(from, fieldBegin) + rewrites[column]!(field);
        from = i;
      }
      field = "";
    };
    for (let i = 0; i < text.length; i++) {
      const c = text[i]!;
      if (!quoting && (escaped || c === "\\")) {
        escaped = !escaped;
        afterCR = false;
        fieldLength += 1;
        if (collecting()) field += c;
        continue;
      }
      if (inQuotes) {
        if (quotePending) {
          quotePending = false;
          if (c === '"') {
            if (collecting()) field += c;
            continue; // an escaped quote inside the field
          }
          inQuotes = false; // the closing quote: c is read below as outside quotes
        } else {
          if (c === '"') quotePending = true;
          else if (collecting()) field += c;
          continue;
        }
      }
      if (c === "\n" && afterCR) {
        afterCR = false;
        fieldBegin = i + 1;
        continue;
      }
      afterCR = false;
      if (c === delimiter) {
        emptyHere(i);
        endField(i);
        column += 1;
        fieldLength = 0;
        fieldBegin = i + 1;
      } else if (c === "\n" || c === "\r") {
        // A blank line keeps column 0: it is no record with one empty field.
        if (column > 0 || fieldLength > 0) {
          emptyHere(i);
          endField(i);
          if (!header) row += 1;
        }
        header = false;
        column = 0;
        fieldLength = 0;
        fieldBegin = i + 1;
        afterCR = c === "\r";
      } else {
        if (quoting && c === '"' && fieldLength === 0) inQuotes = true;
        else if (collecting()) field += c;
        fieldLength += 1;
      }
    }
    // A field written anew is held back until it ends (in a later piece, perhaps).
    return out + text.slice(from, rewriting() ? Math.max(from, fieldBegin) : text.length);
  };

  return new Transform({
    transform(chunk: Buffer, _encoding, done: TransformCallback) {
      try {
        done(null, scan(decoder.write(chunk)));
      } catch (error) {
        done(error as Error);
      }
    },
    flush(done: TransformCallback) {
      try {
        let rest = scan(decoder.end());
        // The last line without its line end: its last field ends with the file.
        if (inQuotes && quotePending) inQuotes = false;
        // A quote never closed: ClickHouse would refuse the file, but a field held back to be
        // written anew would have vanished with it (and the rows after the quote with it).
        if (inQuotes) throw new Error(`row ${row + 1}: a quoted field is not closed at the end of the file`);
        if (!inQuotes && (column > 0 || fieldLength > 0)) {
          if (column > 0 && endedEmptyNullable()) rest += NULL;
          checkField();
          if (rewriting()) rest += rewrites[column]!(field);
        }
        done(null, rest);
      } catch (error) {
        done(error as Error);
      }
    },
  });
}
