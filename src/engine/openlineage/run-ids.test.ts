import { describe, expect, it } from "vitest";
import { columnStoreNamespace, sourceDataset } from "./names.js";
import { jobRunId, nameBasedUuid, taskRunId } from "./run-ids.js";

describe("run ids", () => {
  it("are RFC 4122 version-5 UUIDs of our names (the same as any uuid5 implementation gives)", () => {
    // Python: uuid.uuid5(uuid.UUID("051f355a-db8f-4538-a047-5554c8fbec35"), "jobhouse:job:42")
    expect(jobRunId(42n)).toBe("cf3da0e9-c94d-59ce-93d6-70b2da6f0a07");
    // RFC 4122 appendix B's example name in the DNS name space.
    expect(nameBasedUuid("www.example.com", "6ba7b810-9dad-11d1-80b4-00c04fd430c8")).toBe("2ed6657d-e927-568b-95e1-2665a8aea6a2");
  });

  it("give each attempt of a task its own run", () => {
    expect(taskRunId(7n, 1)).not.toBe(taskRunId(7n, 2));
    expect(taskRunId(7n, 1)).toBe(taskRunId(7n, 1));
    expect(taskRunId(7n, 1)).not.toBe(jobRunId(7n));
  });
});

describe("dataset names", () => {
  it("name ClickHouse by host and port, files by path, URLs by origin and path", () => {
    expect(columnStoreNamespace({ engine: "server", location: "http://u:p@ch.internal:8123/jobs", database: "jobs" })).toBe("clickhouse://ch.internal:8123");
    expect(columnStoreNamespace({ engine: "server", location: "https://ch.example.com/jobs", database: "jobs" })).toBe("clickhouse://ch.example.com:8443");
    expect(columnStoreNamespace({ engine: "chdb", location: "/srv/chdb", database: "default" })).toBe("clickhouse://localhost");
    expect(sourceDataset("file", "/data/orders.csv")).toEqual({ namespace: "file", name: "/data/orders.csv" });
    expect(sourceDataset("url", "https://example.com:8443/exports/orders.csv?day=1")).toEqual({ namespace: "https://example.com:8443", name: "/exports/orders.csv?day=1" });
  });
});
