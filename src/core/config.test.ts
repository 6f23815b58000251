import { describe, expect, it } from "vitest";
import { ConfigError, colorWanted, loadConfig, redactUrl } from "./config.js";

describe("loadConfig", () => {
  it("defaults to local mode under SERVICE_HOME", () => {
    const config = loadConfig({ SERVICE_HOME: "/srv/jh" });
    expect(config.mode).toBe("local");
    expect(config.sql).toEqual({ dialect: "sqlite", location: "/srv/jh/local.db" });
    expect(config.ch).toEqual({ engine: "chdb", location: "/srv/jh/chdb", database: "default" });
    expect(config.logDir).toBe("/srv/jh/logs");
    expect(config.auth).toBe("token");
    expect(config.workerTimeoutS).toBe(30);
    expect(config.jobTtlDays).toBe(90);
  });

  it("reads distributed mode from a PostgreSQL and a ClickHouse server URL", () => {
    const config = loadConfig({ SERVICE_SQL_URL: "postgres://u@db/x", SERVICE_CH_URL: "http://u:p@ch:8123/analytics", SERVICE_HOME: "/h" });
    expect(config.mode).toBe("distributed");
    expect(config.ch).toMatchObject({ engine: "server", database: "analytics" });
    expect(config.auth).toBe("users");
  });

  it("refuses a mix in one line naming both variables, without leaking a password", () => {
    expect(() => loadConfig({ SERVICE_SQL_URL: "sqlite:/x.db", SERVICE_CH_URL: "http://me:secret@ch:8123" })).toThrow(ConfigError);
    try {
      loadConfig({ SERVICE_SQL_URL: "sqlite:/x.db", SERVICE_CH_URL: "http://me:secret@ch:8123" });
    } catch (error) {
      const message = (error as Error).message;
      expect(message).toContain("SERVICE_SQL_URL=sqlite:/x.db");
      expect(message).toContain("SERVICE_CH_URL=http://me:***@ch:8123");
      expect(message).not.toContain("secret");
      expect(message).not.toContain("\n");
    }
    expect(() => loadConfig({ SERVICE_SQL_URL: "mysql://x" })).toThrow(/SERVICE_SQL_URL=mysql:\/\/x and SERVICE_CH_URL=\(unset\)/);
  });

  // Found by trying the product: a file as the home was "unexpected failure: EEXIST …", exit 10.
  // Found by a security trial: these printed the password, or its end.
  it("hides a store URL's password in every shape a URL can hold one", () => {
    expect(redactUrl("postgres://me:s3cret@db:5432/x")).toBe("postgres://me:***@db:5432/x");
    expect(redactUrl("postgres://postgres:P@ss@127.0.0.1:1/x")).toBe("postgres://postgres:***@127.0.0.1:1/x");
    expect(redactUrl("postgres://:OnlyPw@127.0.0.1:1/x")).toBe("postgres://:***@127.0.0.1:1/x");
    expect(redactUrl("postgres://postgres@127.0.0.1:1/x?password=QsPw&sslmode=disable")).toBe("postgres://postgres@127.0.0.1:1/x?password=***&sslmode=disable");
    expect(redactUrl("http://127.0.0.1:1/db?user=default&password=ChPw")).toBe("http://127.0.0.1:1/db?user=default&password=***");
    expect(redactUrl("postgres://db/x")).toBe("postgres://db/x");
    expect(redactUrl("sqlite:/home/me/store.db")).toBe("sqlite:/home/me/store.db");
  });

  it("refuses a SERVICE_HOME that is a file, naming it", () => {
    expect(() => loadConfig({ SERVICE_HOME: "/etc/passwd" })).toThrow(new ConfigError("SERVICE_HOME /etc/passwd is not a directory: name a folder (it is made if missing)"));
  });

  it("rejects bad numbers and enums", () => {
    expect(() => loadConfig({ SERVICE_WORKER_TIMEOUT: "-3" })).toThrow(/SERVICE_WORKER_TIMEOUT/);
    expect(() => loadConfig({ SERVICE_DEFAULT_PRESERVATION_MODE: "SOME" })).toThrow(/PRESERVATION/);
    expect(() => loadConfig({ SERVICE_AUTH: "users" })).toThrow(/local mode/);
    // A malformed store URL names its variable (its password hidden), not "unexpected failure: Invalid URL".
    expect(() => loadConfig({ SERVICE_SQL_URL: "postgres://postgres:pw@[::1:5432/x", SERVICE_CH_URL: "http://127.0.0.1:8123/x" })).toThrow(
      /^SERVICE_SQL_URL=postgres:\/\/postgres:\*\*\*@\[::1:5432\/x is not a valid URL: it does not parse/,
    );
    expect(() => loadConfig({ SERVICE_SQL_URL: "postgres://127.0.0.1/x", SERVICE_CH_URL: "http://127.0.0.1:abc/x" })).toThrow(/^SERVICE_CH_URL=http:\/\/127\.0\.0\.1:abc\/x is not a valid URL/);
    expect(() => loadConfig({ SERVICE_SQL_URL: "postgres://127.0.0.1/x", SERVICE_CH_URL: "http://u:top%zzsecret@127.0.0.1:8123/x" })).toThrow(
      /^SERVICE_CH_URL=http:\/\/u:\*\*\*@127\.0\.0\.1:8123\/x is not a valid URL: a malformed percent-encoding/,
    );
    // pg's own forms still load: a Unix socket with credentials, a bare % in a password.
    expect(loadConfig({ SERVICE_SQL_URL: "postgres://u:pw@/db?host=/var/run/postgresql", SERVICE_CH_URL: "http://127.0.0.1:8123/x" }).mode).toBe("distributed");
    expect(loadConfig({ SERVICE_SQL_URL: "postgres://u:50%off@127.0.0.1/db", SERVICE_CH_URL: "http://127.0.0.1:8123/x" }).mode).toBe("distributed");
    // A timer holds at most 2^31 - 1 ms: a longer task timeout fired at once.
    expect(() => loadConfig({ SERVICE_TASK_TIMEOUT: "3000000" })).toThrow(/SERVICE_TASK_TIMEOUT must be at most 2147483, got "3000000"/);
    expect(loadConfig({ SERVICE_TASK_TIMEOUT: "2147483" }).taskTimeoutS).toBe(2147483);
  });
});

describe("colour", () => {
  it("on a terminal unless NO_COLOR is set to anything", () => {
    expect(colorWanted(true, {})).toBe(true);
    expect(colorWanted(true, { NO_COLOR: "1" })).toBe(false);
    expect(colorWanted(true, { NO_COLOR: "" })).toBe(true);
    expect(colorWanted(false, {})).toBe(false);
  });
});
