// Client-side value binding for ClickHouse SQL. ClickHouse 18.16 has no query parameters, so every
// value is escaped here and every identifier is validated or quoted; nothing else reaches the text.

export class Sql {
  constructor(readonly text: string) {}
  toString(): string {
    return this.text;
  }
}

/** A trusted SQL fragment, inserted verbatim; only for text built by this module or by code. */
export const raw = (text: string): Sql => new Sql(text);

/** Escapes a string as a single-quoted ClickHouse literal. */
export function quoteString(value: string): string {
  let out = "'";
  for (const ch of value) {
    switch (ch) {
      case "\\":
        out += "\\\\";
        break;
      case "'":
        out += "\\'";
        break;
      case "\n":
        out += "\\n";
        break;
      case "\r":
        out += "\\r";
        break;
      case "\t":
        out += "\\t";
        break;
      case "\0":
        out += "\\0";
        break;
      default:
        out += ch;
    }
  }
  return out + "'";
}

/** Quotes an identifier with backticks (database, table or column name). */
export function ident(name: string): Sql {
  if (name.length === 0 || name.length > 255) throw new RangeError(`invalid identifier length: ${name.length}`);
  return new Sql("`" + name.replace(/\\/g, "\\\\").replace(/`/g, "\\`") + "`");
}

/** Renders one JavaScript value as a ClickHouse literal. */
export function literal(value: unknown): string {
  if (value instanceof Sql) return value.text;
  if (value === null || value === undefined) return "NULL";
  if (typeof value === "string") return quoteString(value);
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "number") {
    if (!Number.isFinite(value)) throw new RangeError(`cannot bind non-finite number ${value}`);
    return String(value);
  }
  if (typeof value === "boolean") return value ? "1" : "0";
  if (value instanceof Date) return `toDateTime(${quoteString(value.toISOString().slice(0, 19).replace("T", " "))}, 'UTC')`;
  if (Array.isArray(value)) return "[" + value.map(literal).join(", ") + "]";
  throw new TypeError(`cannot bind a value of type ${typeof value}`);
}

/** Tagged template: `sql\`SELECT * FROM ${ident(t)} WHERE name = ${value}\`` with every value escaped. */
export function sql(strings: TemplateStringsArray, ...values: unknown[]): Sql {
  let text = strings[0] ?? "";
  values.forEach((value, i) => {
    text += literal(value) + (strings[i + 1] ?? "");
  });
  return new Sql(text);
}
