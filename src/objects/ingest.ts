// New objects from files and URLs: CSV, TSV, JSON lines (both engines) and Parquet (chDB, whose
// ClickHouse reads Parquet itself). Types are inferred from a sample of the rows and can be
// overridden; the bytes themselves go to ClickHouse as they are, in their own format.

import { parseJsonExactly } from "../core/json-integers.js";
import { createReadStream, existsSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { extname, resolve } from "node:path";
import { createInterface } from "node:readline";
import { Readable, pipeline } from "node:stream";
import { invalid } from "../core/errors.js";
import type { RawFormat } from "../data/client.js";
import { checkNewColumnName } from "../data/derive.js";
import { raw, sql } from "../data/sql.js";
import { type Features, checkDelimitedText, holdsNull, inferType, jsonConverter, normalizeType, typeShape } from "../data/types.js";
import { findObjectByTable, invalidateObjectStats } from "../store/data-objects.js";
import { recordOperation } from "../store/object-lineage.js";
import { type FieldCheck, type FieldRewrite, nullEmptyFields } from "./delimited-nulls.js";
import { type CreateOptions, type DataScope, type ObjectRecord, dropObject } from "./object-registry.js";
import { appendRows, createFromColumns, derive } from "./tables.js";

export type FileFormat = "csv" | "tsv" | "jsonl" | "parquet";

export interface FileOptions extends CreateOptions {
  /** Default: from the extension (.csv, .tsv, .jsonl/.ndjson, .parquet). */
  format?: FileFormat;
}

const RAW_FORMATS: Record<"csv" | "tsv", RawFormat> = {
  csv: "CSVWithNames",
  tsv: "TabSeparatedWithNames",
};

const JSON_BATCH = 50_000;

/**
 * JSON lines go in as parsed rows, in batches (the client streams only objects for JSONEachRow),
 * each value checked and converted for its column as createObject's are: ClickHouse stored 300 in
 * an Int8 as 44, 2024-02-30 as 2024-03-01, and null in a column that is not Nullable as 0.
 */
async function insertJsonLines(ds: DataScope, table: string, input: Readable, columns: readonly { name: string; type: string }[]): Promise<void> {
  const converters = new Map(columns.map((c) => [c.name, jsonConverter(c.type)] as const));
  let batch: Record<string, unknown>[] = [];
  let line = 0;
  for await (const text of createInterface({ input, crlfDelay: Infinity })) {
    line += 1;
    if (text.trim() === "") continue;
    let parsed: Record<string, unknown>;
    try {
      // An integer past 2^53 is read as a bigint: JSON.parse would round it in silence (a 64-bit
      // id 9007199254740993 stored as …992). Its column takes it exactly or refuses it.
      parsed = parseJsonExactly(text) as Record<string, unknown>;
    } catch {
      throw new Error(`line ${line} is not JSON`);
    }
    if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) throw new Error(`line ${line} is not a JSON object`);
    for (const key of Object.keys(parsed)) {
      if (!converters.has(key)) throw new Error(`line ${line} has a field "${key}" that no column holds (the columns come from the file's first ${SAMPLE_BYTES / 1024} KiB; name it in types)`);
    }
    // No prototype: a column may be named constructor or __proto__ like any other.
    const row: Record<string, unknown> = Object.create(null);
    for (const [name, convert] of converters) {
      try {
        row[name] = convert(parsed[name]);
      } catch (error) {
        throw new Error(`line ${line}, column "${name}": ${(error as Error).message}`);
      }
    }
    batch.push(row);
    if (batch.length >= JSON_BATCH) {
      await appendRows(ds, table, batch, columns);
      batch = [];
    }
  }
  await appendRows(ds, table, batch, columns);
}

const SAMPLE_BYTES = 256 * 1024;

function formatOf(source: string, given?: FileFormat): FileFormat {
  if (given) {
    if (!["csv", "tsv", "jsonl", "parquet"].includes(given)) throw invalid(`format must be csv, tsv, jsonl or parquet, got "${given}"`);
    return given;
  }
  const ext = extname(new URL(source, "file:///").pathname).toLowerCase();
  const byExt: Record<string, FileFormat> = { ".csv": "csv", ".tsv": "tsv", ".jsonl": "jsonl", ".ndjson": "jsonl", ".parquet": "parquet" };
  const format = byExt[ext];
  if (!format) throw invalid(`cannot tell the format of "${source}" from its extension; pass format: csv, tsv, jsonl or parquet`);
  return format;
}

const isUrl = (source: string) => /^https?:\/\//i.test(source);

/** A new object from a CSV/TSV/JSONL/Parquet file path or http(s) URL. */
export async function createFromFile(ds: DataScope, source: string, options: FileOptions = {}): Promise<ObjectRecord> {
  const format = formatOf(source, options.format);
  const features = await ds.columns.features();
  let bytes: Buffer | null = null;
  let path: string | null = null;
  if (isUrl(source)) {
    const response = await fetch(source).catch((error: Error) => {
      throw invalid(`could not download ${source}: ${error.message}`);
    });
    if (!response.ok) throw invalid(`could not download ${source}: HTTP ${response.status}`);
    bytes = Buffer.from(await response.arrayBuffer());
  } else {
    path = resolve(source);
    if (!existsSync(path) || !statSync(path).isFile()) throw invalid(`file "${source}" does not exist`);
  }

  if (format === "parquet") return createFromParquet(ds, path, options);

  const sample = bytes ? bytes.subarray(0, SAMPLE_BYTES).toString("utf8") : await readHead(path!);
  const { names, columns } = format === "jsonl" ? sampleJsonLines(sample) : sampleDelimited(sample, format === "csv" ? "," : "\t");
  names.forEach(checkNewColumnName);
  // 18.16 said only "Expected end of line" for a header with a name twice.
  const twice = names.find((name, i) => names.indexOf(name) !== i);
  if (twice !== undefined) throw invalid(`"${source}" cannot be loaded: the header names column "${twice}" twice`);
  for (const typed of Object.keys(options.types ?? {})) if (!names.includes(typed)) throw invalid(`types names "${typed}", which "${source}" has no column for`);
  // A column's type as given or inferred, before the engine's own (Bool is UInt8 on 18.16).
  const authoredTypeOf = (n: string, i: number) => {
    try {
      return options.types?.[n] ?? inferText(columns[i]!, features, format);
    } catch (error) {
      throw invalid(`"${source}" cannot be loaded: column "${n}": ${(error as Error).message}`);
    }
  };
  const authored = Object.fromEntries(names.map((n, i) => [n, authoredTypeOf(n, i)]));
  const types = Object.fromEntries(names.map((n) => [n, normalizeType(authored[n]!, features)]));
  // An empty object with the file's schema, then its bytes appended in their own format.
  const record = await createFromColumns(ds, Object.fromEntries(names.map((n) => [n, []])), { ...options, types });
  try {
    const input = bytes ? Readable.from([bytes]) : createReadStream(path!);
    if (format === "jsonl") await insertJsonLines(ds, record.table, input, names.map((name) => ({ name, type: types[name]! })));
    else {
      // An empty field of a Nullable column is null on every engine (18.16 stored 0 or ""); in a TSV
      // an empty field is the only way to write an empty text, so text columns keep it.
      const nullable = names.map((n) => holdsNull(types[n]!) && (format === "csv" || typeShape(types[n]!).base !== "String"));
      // Every field of a column that is not text is checked as createObject checks a value (the
      // engines stored 300 in an Int8 as 44, an empty number as 0), the rows past the sample too.
      // A boolean column's fields are checked as booleans, whatever type the engine stores them
      // in, and written unquoted (chDB refused a quoted "false"), as 1 and 0 where ClickHouse has
      // no Bool (18.16, whose UInt8 refused true).
      const booleanTypes = names.map((n) => {
        const type = normalizeType(authored[n]!, { ...features, bool: true });
        return typeShape(type).base === "Bool" && typeShape(type).arrayDepth === 0 ? type : null;
      });
      const rewriteBoolean = features.bool ? booleanField : booleanFieldAsInteger;
      const rewrites: FieldRewrite[] = booleanTypes.map((type) => (type ? rewriteBoolean : null));
      const checks: FieldCheck[] = names.map((n, i) => {
        const type = booleanTypes[i] ?? types[n]!;
        if (typeShape(type).base === "String") return null;
        return (text) => {
          try {
            checkDelimitedText(text, type);
          } catch (error) {
            throw new Error(`column "${n}": ${(error as Error).message}`);
          }
        };
      });
      let refusal: Error | undefined;
      const fields = nullEmptyFields(nullable, format === "csv" ? "," : "\t", checks, rewrites).on("error", (error: Error) => (refusal ??= error));
      // pipeline: a read error of the file ends the insert too (pipe would leave it waiting).
      const delimited = nullable.includes(true) || checks.some(Boolean) || rewrites.some(Boolean) ? pipeline(input, fields, () => undefined) : input;
      try {
        await ds.columns.insertRaw(record.table, delimited, RAW_FORMATS[format]);
      } catch (error) {
        // A refused field ends the stream: the insert then fails as ClickHouse saw it, cut short.
        throw refusal ?? error;
      }
      if (refusal) throw refusal;
    }
  } catch (error) {
    // Half a file is not an object: drop it, so a corrected load can take the name.
    const row = await findObjectByTable(ds.db, record.table);
    if (row) await dropObject(ds.db, ds.columns, row);
    throw invalid(`"${source}" could not be loaded as ${format}: ${(error as Error).message.split("\n")[0]}`);
  }
  // Measured as empty by a read while the bytes went in: measured again from now on.
  await invalidateObjectStats(ds.db, record.id);
  // Lineage says where the data came from.
  await recordOperation(ds.db, {
    id: ds.ids.next(),
    objectId: record.id,
    objectName: record.name,
    operation: "load",
    sqlText: `INSERT INTO ${record.table} FORMAT ${format === "jsonl" ? "JSONEachRow" : RAW_FORMATS[format]} FROM ${source}`,
    jobId: ds.jobId,
    taskId: ds.taskId,
    attempt: ds.attempt,
    nowMs: ds.clock.now(),
    inputs: [],
    columns: [],
    sources: [{ kind: path === null ? "url" : "file", location: path ?? source, format, sizeBytes: bytes ? bytes.length : statSync(path!).size }],
  });
  return record;
}

async function createFromParquet(ds: DataScope, path: string | null, options: FileOptions): Promise<ObjectRecord> {
  if (options.types || options.orderBy) throw invalid("Parquet files carry their own schema: types and orderBy do not apply");
  if (ds.columns.engine !== "chdb" || path === null) {
    throw invalid("Parquet is read by the embedded engine from a local file; convert it to CSV or JSON lines for a ClickHouse server or a URL");
  }
  const select = sql`SELECT * FROM file(${path}, ${raw("Parquet")})`;
  return derive(ds, "load_parquet", [], { select, lineage: {} }, options, [{ kind: "file", location: path, format: "parquet", sizeBytes: statSync(path).size }]);
}

async function readHead(path: string): Promise<string> {
  const handle = await open(path, "r");
  try {
    const buffer = Buffer.alloc(SAMPLE_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SAMPLE_BYTES, 0);
    return buffer.subarray(0, bytesRead).toString("utf8");
  } finally {
    await handle.close();
  }
}

/** Header and sampled values of a CSV/TSV head (the last, possibly cut, line is ignored). */
function sampleDelimited(text: string, delimiter: string): { names: string[]; columns: string[][] } {
  const records = parseDelimited(text, delimiter);
  if (text.length >= SAMPLE_BYTES && records.length > 1) records.pop();
  const [header, ...rows] = records;
  if (!header || header.length === 0 || header.every((h) => h === "")) throw invalid("the file has no header row");
  const names = header.map((h) => h.trim());
  return { names, columns: names.map((_, i) => rows.map((r) => r[i] ?? "")) };
}

/** RFC 4180 fields: quotes, doubled quotes, delimiters and newlines inside quotes. */
function parseDelimited(text: string, delimiter: string): string[][] {
  const records: string[][] = [];
  let field = "";
  let record: string[] = [];
  let quoted = false;
  const endField = () => {
    record.push(field);
    field = "";
  };
  const endRecord = () => {
    endField();
    records.push(record);
    record = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else field += ch;
    } else if (ch === '"' && field === "") quoted = true;
    else if (ch === delimiter) endField();
    else if (ch === "\n" || ch === "\r") {
      if (ch === "\r" && text[i + 1] === "\n") i++;
      endRecord();
    } else field += ch;
  }
  if (field !== "" || record.length > 0) endRecord();
  return records.filter((r) => !(r.length === 1 && r[0] === ""));
}

function sampleJsonLines(text: string): { names: string[]; columns: string[][] } {
  const lines = text.split("\n").filter((l) => l.trim() !== "");
  if (text.length >= SAMPLE_BYTES && lines.length > 1) lines.pop();
  const rows = lines.map((line, i) => {
    try {
      return parseJsonExactly(line) as Record<string, unknown>;
    } catch {
      throw invalid(`line ${i + 1} is not JSON`);
    }
  });
  const names = [...new Set(rows.flatMap((r) => Object.keys(r)))];
  return { names, columns: names.map((n) => rows.map((r) => r[n]) as never) };
}

/** A checked boolean field (true, false, 1, 0, or empty / \N in a Nullable column), unquoted. */
const booleanField = (text: string): string => (text === "" ? "\\N" : text);
/** The same as UInt8 text. */
const booleanFieldAsInteger = (text: string): string => (text === "true" ? "1" : text === "false" ? "0" : booleanField(text));

/**
 * The type for sampled text values (or parsed JSON values for JSON lines); a CSV or TSV column of
 * true and false is Bool, which normalizeType makes UInt8 where the engine has none.
 */
function inferText(values: unknown[], features: Features, format: FileFormat): string {
  if (format === "jsonl") return inferType(values, features);
  const texts = values as string[];
  const present = texts.filter((v) => v !== "" && v !== "\\N");
  // An empty field is an empty string in a text column (engines disagree on reading it as NULL);
  // elsewhere, and wherever \N appears, the column is nullable.
  const explicitNull = texts.some((v) => v === "\\N");
  let base = "String";
  if (present.length > 0 && present.every((v) => /^-?\d{1,19}$/.test(v) && BigInt(v) >= -(1n << 63n) && BigInt(v) < 1n << 63n)) base = "Int64";
  // Past Int64 but within UInt64 (12345678901234567890): exact, where Float64 rounded it.
  else if (present.length > 0 && present.every((v) => /^\d{1,20}$/.test(v) && BigInt(v) < 1n << 64n)) base = "UInt64";
  else if (present.length > 0 && present.every((v) => /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/.test(v))) base = "Float64";
  else if (present.length > 0 && present.every((v) => v === "true" || v === "false")) base = "Bool";
  else if (present.length > 0 && present.every((v) => /^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}$/.test(v))) base = "DateTime('UTC')";
  const nullable = explicitNull || (base !== "String" && present.length < texts.length);
  return nullable ? `Nullable(${base})` : base;
}

