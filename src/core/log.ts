// Minimal leveled logger writing one line per event to stderr (stdout belongs to CLI output).

import { logLineText } from "./control-chars.js";

export type LogLevel = "debug" | "info" | "warn" | "error";
const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

export interface Logger {
  debug(msg: string, extra?: Record<string, unknown>): void;
  info(msg: string, extra?: Record<string, unknown>): void;
  warn(msg: string, extra?: Record<string, unknown>): void;
  error(msg: string, extra?: Record<string, unknown>): void;
}

export type LogFormat = "text" | "json";

/**
 * `text`: `<time> <LEVEL> <message> <extra as JSON>`, for a person. `json`: one object per line,
 * `{"time", "level", "msg", ...extra}`, for a log shipper (SERVICE_LOG_FORMAT=json).
 */
export function createLogger(level: LogLevel = "info", write: (line: string) => void = (l) => process.stderr.write(l), format: LogFormat = "text"): Logger {
  const emit = (at: LogLevel) => (msg: string, extra?: Record<string, unknown>) => {
    if (ORDER[at] < ORDER[level]) return;
    const time = new Date().toISOString();
    if (format === "json") return void write(JSON.stringify({ time, level: at, msg, ...extra }, jsonSafe) + "\n");
    const tail = extra && Object.keys(extra).length ? " " + JSON.stringify(extra, jsonSafe) : "";
    write(`${time} ${at === "warn" ? "WARNING" : at.toUpperCase()} ${logLineText(msg)}${tail}\n`);
  };
  return { debug: emit("debug"), info: emit("info"), warn: emit("warn"), error: emit("error") };
}

const jsonSafe = (_k: string, v: unknown) => (typeof v === "bigint" ? v.toString() : v);

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} };
