// Column types of data objects: inferred from JavaScript values, or given by the author and
// validated against a small grammar (so a type string can never carry SQL).

export interface Features {
  /** `Bool` exists (ClickHouse 21.12+); older servers store booleans as UInt8. */
  bool: boolean;
  /** LowCardinality needs `allow_experimental_low_cardinality_type` before 19.x. */
  lowCardinalityNeedsSetting: boolean;
  /** The Parquet format (absent from 18.16). */
  parquet: boolean;
}

/** Feature gates from a server version such as "18.16.1" or "26.7.1.1". */
export function featuresOf(version: string): Features {
  const [major = 0, minor = 0] = version.split(".").map(Number);
  const atLeast = (a: number, b: number) => major > a || (major === a && minor >= b);
  return { bool: atLeast(21, 12), lowCardinalityNeedsSetting: !atLeast(19, 0), parquet: atLeast(19, 7) };
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
    if (wrapped) return `${wrapped[1]}(${render(wrapped[2]!, depth + 1)})`;
    const decimal = /^Decimal\((\d{1,2}),(\d{1,2})\)$/.exec(t);
    if (decimal) return `Decimal(${decimal[1]}, ${decimal[2]})`;
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

function inferBase(values: unknown[], features: Features): string {
  if (values.length === 0) return "String";
  if (values.every((v) => typeof v === "boolean")) return features.bool ? "Bool" : "UInt8";
  if (values.every((v) => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v)))) return "Int64";
  if (values.every((v) => typeof v === "number" || typeof v === "bigint")) return "Float64";
  if (values.every((v) => v instanceof Date)) return "DateTime('UTC')";
  if (values.every((v) => Array.isArray(v))) {
    const inner = inferType((values as unknown[][]).flat(), features);
    return `Array(${inner})`;
  }
  if (values.every((v) => typeof v === "string")) return "String";
  const kinds = [...new Set(values.map((v) => (v instanceof Date ? "Date" : Array.isArray(v) ? "array" : typeof v)))];
  throw new TypeError(`cannot infer one type from mixed values (${kinds.join(", ")}); give the column a type`);
}

/** A value as JSONEachRow input for a column of `type`. */
export function toJsonValue(value: unknown, type: string): unknown {
  if (value === null || value === undefined) return type.startsWith("Array(") ? [] : null;
  if (value instanceof Date) return value.toISOString().slice(0, 19).replace("T", " ");
  if (typeof value === "bigint") return value.toString();
  if (typeof value === "boolean") return type.includes("UInt8") ? (value ? 1 : 0) : value;
  if (Array.isArray(value)) {
    const inner = /^(?:Nullable\()?Array\((.*)\)\)?$/.exec(type)?.[1] ?? "String";
    return value.map((v) => toJsonValue(v, inner));
  }
  return value;
}

/**
 * A converter for one column, chosen once: plain numbers and strings pass through (the common case,
 * and the hot loop of a large ingest), the rest go through toJsonValue.
 */
export function jsonConverter(type: string): (value: unknown) => unknown {
  const plain = /^(Nullable\()?(Int\d+|UInt(16|32|64)|Float\d+|String|LowCardinality\(String\))\)?$/.test(type);
  if (!plain) return (value) => toJsonValue(value, type);
  return (value) => (value === undefined ? null : typeof value === "bigint" ? value.toString() : typeof value === "object" && value !== null ? toJsonValue(value, type) : value);
}
