// Column types of data objects: inferred from JavaScript values, or given by the author and
// validated against a small grammar (so a type string can never carry SQL).

export interface Features {
  /** `Bool` exists (ClickHouse 21.12+); older servers store booleans as UInt8. */
  bool: boolean;
  /** LowCardinality needs `allow_experimental_low_cardinality_type` before 19.x. */
  lowCardinalityNeedsSetting: boolean;
  /** The Parquet format (absent from 18.16). */
  parquet: boolean;
  /** EXCHANGE TABLES, atomic in Atomic databases (the default engine from 20.10; chDB). */
  exchangeTables: boolean;
  /** The session_timezone setting (23.6). */
  sessionTimezone: boolean;
  /** Decimals of 39 to 76 digits (Decimal256, 20.8); older servers stop at 38. */
  decimal256: boolean;
}

/** Feature gates from a server version such as "18.16.1" or "26.7.1.1". */
export function featuresOf(version: string): Features {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const atLeast = (a: number, b: number) => major > a || (major === a && minor >= b);
  return { bool: atLeast(21, 12), lowCardinalityNeedsSetting: !atLeast(19, 0), parquet: atLeast(19, 7), exchangeTables: atLeast(21, 1), sessionTimezone: atLeast(23, 6), decimal256: atLeast(20, 8) };
}

const BASE_TYPES = new Set([
  "Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64", "Float32", "Float64",
  "String", "Bool", "Date", "DateTime",
]);

/** Parses and re-renders a type such as `Nullable(Int64)` or `Array(LowCardinality(String))`; throws on anything else. */
export function normalizeType(type: string, features: Features): string {
  const text = type.replace(/\s+/g, "");
  const render = (t: string, depth: number): string => {
    if (depth > 8) throw new TypeError(`type "${type}" nests too deeply`);
    const wrapped = /^(Nullable|Array|LowCardinality)\((.*)\)$/.exec(t);
    if (wrapped) {
      const inner = render(wrapped[2]!, depth + 1);
      // Said here, the same on every engine, rather than in each engine's own words at CREATE.
      if (wrapped[1] === "Nullable" && /^(?:Array|Nullable)\(/.test(inner)) throw new TypeError(`type "${type}": ${inner.replace(/\(.*/, "")} cannot be inside Nullable (an Array holds no NULL itself: use Array(Nullable(T)))`);
      // ClickHouse refuses Nullable(LowCardinality(T)); the same column is LowCardinality(Nullable(T)).
      const lowInside = wrapped[1] === "Nullable" ? /^LowCardinality\((.*)\)$/.exec(inner) : null;
      return lowInside ? `LowCardinality(Nullable(${lowInside[1]}))` : `${wrapped[1]}(${inner})`;
    }
    const decimal = /^Decimal\((\d{1,2}),(\d{1,2})\)$/.exec(t);
    if (decimal) {
      const [precision, scale] = [Number(decimal[1]), Number(decimal[2])];
      const most = features.decimal256 ? 76 : 38;
      if (precision < 1 || precision > most || scale > precision) throw new TypeError(`type "${type}": Decimal(P, S) needs P from 1 to ${most} on this ClickHouse and S from 0 to P`);
      return `Decimal(${precision}, ${scale})`;
    }
    if (t === "DateTime('UTC')" || t === 'DateTime("UTC")') return "DateTime('UTC')";
    if (t === "Bool" && !features.bool) return "UInt8";
    if (!BASE_TYPES.has(t)) throw new TypeError(`unknown column type "${type}"; use e.g. Int64, Float64, String, Bool, DateTime, Nullable(T), Array(T), LowCardinality(String)`);
    return t;
  };
  return render(text, 0);
}

/** The type a column of JavaScript values needs (CONTRACT §5: inferred, overridable). */
export function inferType(values: readonly unknown[], features: Features): string {
  let nullable = false;
  const present: unknown[] = [];
  for (const value of values) {
    if (value === null || value === undefined) nullable = true;
    else present.push(value);
  }
  const base = inferBase(present, features);
  // ClickHouse has no Nullable(Array(...)): a missing array is stored as an empty one.
  return nullable && !base.startsWith("Array(") ? `Nullable(${base})` : base;
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;
const UINT64_MAX = (1n << 64n) - 1n;

function inferBase(values: unknown[], features: Features): string {
  if (values.length === 0) return "String";
  if (values.every((v) => typeof v === "boolean")) return features.bool ? "Bool" : "UInt8";
  if (values.every((v) => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v)))) {
    const bigs = values.filter((v): v is bigint => typeof v === "bigint");
    if (bigs.every((v) => v >= INT64_MIN && v <= INT64_MAX)) return "Int64";
    if (bigs.every((v) => v >= 0n && v <= UINT64_MAX) && values.every((v) => typeof v === "bigint" || (v as number) >= 0)) return "UInt64";
    throw new TypeError("an integer is outside both Int64 and UInt64; store it as a string");
  }
  if (values.some((v) => typeof v === "bigint") && values.some((v) => typeof v === "number")) {
    throw new TypeError("a column mixes bigints and fractional numbers, which would lose precision; give the column a type");
  }
  if (values.every((v) => typeof v === "number")) return "Float64";
  if (values.every((v) => v instanceof Date)) return "DateTime('UTC')";
  if (values.every((v) => Array.isArray(v))) {
    const inner = inferType((values as unknown[][]).flat(), features);
    return `Array(${inner})`;
  }
  if (values.every((v) => typeof v === "string")) return "String";
  if (values.some((v) => typeof v === "object" && !Array.isArray(v) && !(v instanceof Date))) {
    throw new TypeError("a column holds objects; columns hold scalars, dates and arrays (store nested data as JSON text)");
  }
  const kinds = [...new Set(values.map((v) => (v instanceof Date ? "Date" : Array.isArray(v) ? "array" : typeof v)))];
  throw new TypeError(`cannot infer one type from mixed values (${kinds.join(", ")}); give the column a type`);
}

/** A value as JSONEachRow input for a column of `type`. */
export function toJsonValue(value: unknown, type: string): unknown {
  if (value === null || value === undefined) {
    if (type.startsWith("Array(")) return [];
    // ClickHouse would store a default (0, '') in silence: a missing value needs a Nullable column.
    if (!holdsNull(type)) throw new TypeError(`null in a column of type ${type}; make the column Nullable`);
    return null;
  }
  if (typeof value === "number" && !Number.isFinite(value)) throw new TypeError(`${value} cannot be stored; use null in a Nullable column`);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) throw new TypeError("an invalid Date cannot be stored");
    if (value.getTime() < 0) throw new TypeError(`${value.toISOString()} is before 1970, which DateTime cannot hold`);
    if (value.getTime() > LAST_INSTANT_MS) throw new TypeError(`${value.toISOString()} is after 2105, which Date and DateTime cannot hold`);
    const iso = value.toISOString();
    return /(^|\()Date\)*$/.test(type.replace(/^Nullable\(/, "")) ? iso.slice(0, 10) : iso.slice(0, 19).replace("T", " ");
  }
  if (Array.isArray(value)) {
    const inner = /^(?:Nullable\()?Array\((.*)\)\)?$/.exec(type)?.[1] ?? "String";
    return value.map((v) => toJsonValue(v, inner));
  }
  checkScalar(value, type);
  const decimal = decimalShape(typeShape(type).base);
  // A decimal travels as its exact digits, written unquoted into the JSON (decimalRowJson).
  if (decimal) return typeof value === "number" ? decimalText(value, decimal.scale)! : canonicalDecimal(value as string);
  if (typeof value === "bigint") return value.toString();
  // An integer past 2^53 as a number is exact, but JSON would write its shortest form
  // (4611686018427387904 as 4611686018427388000): send its exact digits.
  if (typeof value === "number" && !Number.isSafeInteger(value) && INTEGER_BASE.test(typeShape(type).base)) return BigInt(value).toString();
  // "2024-01-02T10:00:00" as ClickHouse reads a DateTime everywhere: with a space.
  if (typeof value === "string" && type.includes("DateTime")) return value.replace("T", " ");
  if (typeof value === "boolean") return type.includes("UInt8") ? (value ? 1 : 0) : value;
  return value;
}

const STRING_BASE = /^(?:String|FixedString\(\d+\)|Enum(?:8|16)?\(.*\)|UUID|IPv[46])$/;
const INTEGER_BASE = /^U?Int(?:8|16|32|64|128|256)$/;

/**
 * Refuses a value ClickHouse would change or reject with a parse error: a number or boolean in a
 * String column (stored as "5", "true"), a fraction or a string in an integer column, a negative
 * number in an unsigned one. Integer columns also take bigints and strings of digits (how a 64-bit
 * value travels without rounding).
 */
function checkScalar(value: unknown, type: string): void {
  const { base } = typeShape(type);
  const kind = typeof value;
  const refuse = () => {
    const shown = kind === "string" ? JSON.stringify(value) : String(value);
    throw new TypeError(`${shown} (a ${kind}) does not fit type ${type}`);
  };
  if (STRING_BASE.test(base)) {
    if (kind !== "string") refuse();
  } else if (INTEGER_BASE.test(base)) {
    const integral =
      kind === "bigint" ||
      (kind === "number" && Number.isInteger(value)) ||
      (kind === "string" && /^-?\d+$/.test(value as string)) ||
      (kind === "boolean" && base === "UInt8");
    if (!integral) refuse();
    if (base.startsWith("U") && kind !== "boolean" && String(value).startsWith("-")) refuse();
    // ClickHouse wraps a value outside the type's range (300 in an Int8 is stored as 44).
    if (kind !== "boolean" && !fitsInteger(base, value as number | bigint | string)) throw new TypeError(`${String(value)} is outside the range of ${type}`);
  } else if (/^Float(?:32|64)$/.test(base) || /^Decimal/.test(base)) {
    if (kind === "bigint") throw new TypeError(`${String(value)} is an integer past 2^53, which ${type} cannot hold exactly; give the column an integer type`);
    if (kind !== "number" && !(kind === "string" && /^-?\d+(\.\d+)?$/.test(value as string))) refuse();
    // Past Float32's range a value is stored as inf, which JSON reads back as null.
    if (base === "Float32" && Math.abs(Number(value)) > FLOAT32_MAX) throw new TypeError(`${String(value)} is outside the range of ${type} (±3.4e38)`);
    const decimal = decimalShape(base);
    if (decimal && !fitsDecimal(value as number | string, decimal.precision, decimal.scale)) {
      throw new TypeError(`${String(value)} does not fit ${type} (at most ${decimal.precision - decimal.scale} digits before the point and ${decimal.scale} after it)`);
    }
  } else if (base === "Bool") {
    if (kind !== "boolean") refuse();
  } else if (base === "Date" || base.startsWith("DateTime")) {
    // A text ClickHouse cannot read as a date is stored as 1970-01-01 (or 0000-00-00) in silence.
    if (kind !== "string" || !isCalendarText(value as string, base === "Date")) {
      throw new TypeError(`${kind === "string" ? JSON.stringify(value) : String(value)} is not a ${base === "Date" ? "date (YYYY-MM-DD)" : "date-time (YYYY-MM-DD hh:mm:ss, UTC)"} between 1970 and 2105; pass a Date or such a text`);
    }
  }
}

/**
 * A field of a CSV or TSV file, checked for its column as createObject checks a value: ClickHouse
 * stored 300 in an Int8 as 44, 2024-02-30 as 2024-03-01, and an empty field of a column that is not
 * Nullable as 0. Text columns take any field; arrays are left to ClickHouse's own parser.
 */
export function checkDelimitedText(text: string, type: string): void {
  const { base, arrayDepth } = typeShape(type);
  if (STRING_BASE.test(base) || arrayDepth > 0) return;
  if (text === "" || text === "\\N") {
    if (!holdsNull(type)) throw new TypeError(`${text === "" ? "an empty field" : "\\N (null)"} in a column of type ${type}, which is not Nullable`);
    return;
  }
  if (/^Float(?:32|64)$/.test(base)) {
    const number = Number(text);
    if (text.trim() !== text || !Number.isFinite(number)) throw new TypeError(`"${text}" is not a finite number (${type})`);
    return checkScalar(number, type);
  }
  if (base === "Bool") {
    if (!/^(?:true|false|1|0)$/.test(text)) throw new TypeError(`"${text}" is not a boolean (true, false, 1 or 0)`);
    return;
  }
  checkScalar(text, type);
}

const FLOAT32_MAX = 3.4028234663852886e38;

/** The last instant every supported ClickHouse holds in Date and DateTime (18.16's calendar ends with 2105). */
const LAST_INSTANT_MS = Date.UTC(2105, 11, 31, 23, 59, 59);

/** "2024-02-29" (or "2024-02-29 10:00:00"): a real calendar date from 1970 through 2105. */
function isCalendarText(text: string, dateOnly: boolean): boolean {
  const match = (dateOnly ? /^(\d{4})-(\d{2})-(\d{2})$/ : /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2}):(\d{2})$/).exec(text);
  if (!match) return false;
  const [y, mo, d, h = 0, mi = 0, s = 0] = match.slice(1).map(Number) as [number, number, number, number?, number?, number?];
  const ms = Date.UTC(y, mo - 1, d, h, mi, s);
  const back = new Date(ms);
  // Date.UTC rolls 2024-13-45 over into 2025; a text that does not come back the same is no date.
  const same = back.getUTCFullYear() === y && back.getUTCMonth() === mo - 1 && back.getUTCDate() === d && back.getUTCHours() === h && back.getUTCMinutes() === mi && back.getUTCSeconds() === s;
  return same && ms >= 0 && ms <= LAST_INSTANT_MS;
}

const INTEGER_RANGES = new Map<string, readonly [bigint, bigint]>(
  [8, 16, 32, 64, 128, 256].flatMap((bits) => [
    [`Int${bits}`, [-(1n << BigInt(bits - 1)), (1n << BigInt(bits - 1)) - 1n]] as const,
    [`UInt${bits}`, [0n, (1n << BigInt(bits)) - 1n]] as const,
  ]),
);

function fitsInteger(base: string, value: number | bigint | string): boolean {
  const range = INTEGER_RANGES.get(base);
  if (!range) return true;
  const big = BigInt(value);
  return big >= range[0] && big <= range[1];
}

/** Decimal(P, S): at most P - S digits before the point and S after it (ClickHouse truncates, or refuses, the rest). */
function fitsDecimal(value: number | string, precision: number, scale: number): boolean {
  const text = typeof value === "number" ? decimalText(value, scale) : value;
  if (text === null) return false;
  const [whole = "", fraction = ""] = text.replace(/^-/, "").split(".");
  return whole.replace(/^0+/, "").length <= precision - scale && fraction.replace(/0+$/, "").length <= scale;
}

/**
 * A number as the shortest decimal text that reads back as it (what JavaScript shows for it), when
 * that has at most `scale` decimals. Not toFixed(scale): past 17 digits it writes the double's
 * binary noise (0.1 as 0.10000000000000000555 in a Decimal(38, 20)).
 */
function decimalText(value: number, scale: number): string | null {
  // From 1e21 on, numbers are written with an exponent ("1e+21"): far past any Decimal's 38 digits anyway.
  if (!Number.isFinite(value) || Math.abs(value) >= 1e21) return null;
  const shortest = String(value);
  // Small numbers are written with an exponent (1e-7): toFixed writes them out, exactly enough.
  const plain = /e/.test(shortest) ? trimmedDecimal(value.toFixed(Math.min(scale, 100))) : shortest;
  const decimals = plain.split(".")[1]?.length ?? 0;
  return decimals <= scale && Number(plain) === value ? plain : null;
}

const DECIMAL_BASE = /^Decimal\((\d+), ?(\d+)\)$/;

/** Decimal(P, S)'s precision and scale, or null for any other base type. */
function decimalShape(base: string): { precision: number; scale: number } | null {
  const match = DECIMAL_BASE.exec(base);
  return match ? { precision: Number(match[1]), scale: Number(match[2]) } : null;
}

/** A decimal's digits without the scale's trailing zeros ("7.50" as "7.5", "7.00" as "7", "-0.0" as "0"). */
const trimmedDecimal = (text: string) => text.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "").replace(/^-0$/, "0");

/** "-007.50" as JSON can carry it: no leading zeros ("-7.50"). */
const canonicalDecimal = (text: string) => text.replace(/^(-?)0+(?=\d)/, "$1");

/** The most significant digits every value of a Float64 holds exactly (DBL_DIG). */
const EXACT_DOUBLE_DIGITS = 15;

/**
 * Whether a column's values are read back as text: a Decimal(P, S) with more digits than a double
 * holds (P > 15), whose values JSON numbers would round. Narrower decimals read back as numbers.
 */
export function readsAsDecimalText(type: string): boolean {
  return (decimalShape(typeShape(type).base)?.precision ?? 0) > EXACT_DOUBLE_DIGITS;
}

/** Whether a column's values are decimals (sent as exact digits, unquoted: decimalRowJson). */
export function isDecimalType(type: string): boolean {
  return decimalShape(typeShape(type).base) !== null;
}

/**
 * A row as one line of JSONEachRow, the values of `decimalColumns` (digit texts, from toJsonValue)
 * written as JSON numbers: ClickHouse 18.16 refuses a quoted decimal, and a JS number would round
 * one of more than 15 digits.
 */
export function decimalRowJson(row: Record<string, unknown>, decimalColumns: ReadonlySet<string>): string {
  const unquoted = (value: unknown): string => (Array.isArray(value) ? `[${value.map(unquoted).join(",")}]` : typeof value === "string" ? value : JSON.stringify(value));
  const fields: string[] = [];
  for (const [name, value] of Object.entries(row)) {
    if (value !== undefined) fields.push(`${JSON.stringify(name)}:${decimalColumns.has(name) ? unquoted(value) : JSON.stringify(value)}`);
  }
  return `{${fields.join(",")}}`;
}

/** Whether a column takes null: Nullable at its top, LowCardinality(Nullable(T)) included. */
export function holdsNull(type: string): boolean {
  return /^(?:LowCardinality\()?Nullable\(/.test(type);
}

/**
 * A converter for one column, chosen once: plain numbers and strings pass through (the common case,
 * and the hot loop of a large ingest), the rest go through toJsonValue.
 */
export function jsonConverter(type: string): (value: unknown) => unknown {
  const nullable = holdsNull(type);
  const { base, arrayDepth } = typeShape(type);
  if (arrayDepth === 0 && (base === "String" || /^Float(?:32|64)$/.test(base) || /^Int(?:8|16|32|64)$/.test(base))) {
    // The hot loop: a string into String, a finite number into a float, an integer into an Int.
    const fast =
      base === "String"
        ? (value: unknown) => typeof value === "string"
        : base === "Float64"
          ? (value: unknown) => typeof value === "number" && Number.isFinite(value)
          : base === "Float32"
            ? (value: unknown) => typeof value === "number" && Math.abs(value) <= FLOAT32_MAX
            : integerTest(base);
    return (value) => (fast(value) ? value : (value === null || value === undefined) && nullable ? null : toJsonValue(value, type));
  }
  return (value) => toJsonValue(value, type);
}

/**
 * A number the fast path may pass as it is: a safe integer within the column's range. The rest
 * (past 2^53, or out of range) goes through toJsonValue, which sends exact digits or refuses.
 */
function integerTest(base: string): (value: unknown) => boolean {
  const [low, high] = INTEGER_RANGES.get(base)!;
  const min = Math.max(Number(low), Number.MIN_SAFE_INTEGER);
  const max = Math.min(Number(high), Number.MAX_SAFE_INTEGER);
  return (value) => Number.isSafeInteger(value) && (value as number) >= min && (value as number) <= max;
}

const WIDE_INTEGER = /^(?:U?Int(?:64|128|256))$/;

export interface TypeShape {
  /** The type without its Nullable, LowCardinality and Array wrappers. */
  base: string;
  nullable: boolean;
  arrayDepth: number;
  lowCardinality: boolean;
}

/** Splits a ClickHouse type into its base type and the wrappers around it (CONTRACT §5 ColumnView). */
export function typeShape(type: string): TypeShape {
  const shape: TypeShape = { base: type.trim(), nullable: false, arrayDepth: 0, lowCardinality: false };
  for (;;) {
    const wrapped = /^(Nullable|LowCardinality|Array)\((.*)\)$/.exec(shape.base);
    if (!wrapped) return shape;
    if (wrapped[1] === "Array") shape.arrayDepth += 1;
    else if (wrapped[1] === "Nullable") shape.nullable = true;
    else shape.lowCardinality = true;
    shape.base = wrapped[2]!.trim();
  }
}

/**
 * A value read back (64-bit integers arrive quoted, so none is rounded by JSON.parse): wide
 * integers become numbers when exact, bigints otherwise.
 */
export function readConverter(type: string): ((value: unknown) => unknown) | null {
  const { base, arrayDepth: arrays } = typeShape(type);
  const deep = (v: unknown, depth: number, one: (x: unknown) => unknown): unknown => (depth > 0 && Array.isArray(v) ? v.map((x) => deep(x, depth - 1, one)) : one(v));
  if (base === "Date" || base.startsWith("DateTime")) {
    // ClickHouse 18.16 writes the epoch (day or second 0) as its "zero date", 0000-00-00.
    const one = (v: unknown): unknown => (typeof v === "string" && v.startsWith("0000-00-00") ? "1970-01-01" + v.slice(10) : v);
    return (value) => deep(value, arrays, one);
  }
  if (readsAsDecimalText(type)) {
    // One text on every engine: 18.16 writes the scale's trailing zeros ("7.0000000000"), chDB not.
    const one = (v: unknown): unknown => (typeof v === "string" ? trimmedDecimal(v) : v);
    return (value) => deep(value, arrays, one);
  }
  if (!WIDE_INTEGER.test(base)) return null;
  const one = (v: unknown): unknown => {
    if (typeof v !== "string" || !/^-?\d+$/.test(v)) return v;
    const big = BigInt(v);
    return big >= BigInt(Number.MIN_SAFE_INTEGER) && big <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(big) : big;
  };
  return (value) => deep(value, arrays, one);
}

/** Applies readConverter per column to rows read as JSONEachRow. */
export function convertRows(rows: Record<string, unknown>[], columns: { name: string; type: string }[]): Record<string, unknown>[] {
  const converters = columns.map((c) => [c.name, readConverter(c.type)] as const).filter(([, f]) => f !== null) as [string, (v: unknown) => unknown][];
  if (converters.length === 0) return rows;
  for (const row of rows) for (const [name, convert] of converters) if (name in row) row[name] = convert(row[name]);
  return rows;
}
