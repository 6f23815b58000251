// jobhouse as a dependency (issue 15 item 4), tested the way a consumer meets it: the package is
// packed (`npm pack`), the tarball installed into a scratch project, a job file type-checked with
// the project's own tsc (no @types of its own) and imported by plain node, and a job run by the
// package's own binary from compiled JavaScript.

import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "..");
const require = createRequire(import.meta.url);
const NPM_FLAGS = ["--prefer-offline", "--no-audit", "--no-fund", "--loglevel=error"];

const run = (command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}) =>
  execFileSync(command, args, { cwd, env: { ...process.env, ...env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], timeout: 240_000 });

/** A command expected to fail: its exit status and everything it printed. */
function runFailing(command: string, args: string[], cwd: string): { status: number; output: string } {
  try {
    run(command, args, cwd);
    return { status: 0, output: "" };
  } catch (error) {
    const failure = error as { status: number; stdout: string; stderr: string };
    return { status: failure.status, output: failure.stdout + failure.stderr };
  }
}

const JOB_TS = `import { job, task } from "jobhouse";
export const add = task("add", async ({ a, b }: { a: number; b: number }) => a + b, { retries: 2 });
export const pipeline = job("pipeline", async ({ n }: { n: number }) => add({ a: add({ a: 1, b: n }), b: 10 }));
`;
const JOB_JS = `import { job, task } from "jobhouse";
export const add = task("add", async ({ a, b }) => a + b);
export const pipeline = job("pipeline", async ({ n }) => add({ a: add({ a: 1, b: n }), b: 10 }));
`;

describe("jobhouse as a dependency", () => {
  let scratch: string;
  let tarball: string;
  let project: string;

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), "jobhouse-package-"));
    // The compiled tree first (what `npm pack` runs as prepack); the pack itself without scripts, so
    // the web app other tests are loading is not rebuilt under them.
    run(process.execPath, [require.resolve("typescript/bin/tsc"), "-p", "tsconfig.build.json"], ROOT);
    const packed = JSON.parse(run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch, "--loglevel=error"], ROOT)) as { filename: string }[];
    tarball = join(scratch, packed[0]!.filename);
    project = join(scratch, "consumer");
    mkdirSync(project);
    writeFileSync(join(project, "package.json"), JSON.stringify({ name: "consumer", version: "1.0.0", private: true, type: "module" }));
    writeFileSync(
      join(project, "tsconfig.json"),
      // As `tsc --init` and TypeScript 6+ set it up (found by trying the product, both failed): no
      // @types loaded unless named (`types: []`), and declarations emitted, which must name every
      // type a job file's exports infer (JobDefinition was not exported).
      JSON.stringify({
        compilerOptions: { target: "ES2022", module: "NodeNext", moduleResolution: "NodeNext", strict: true, types: [], declaration: true, emitDeclarationOnly: true, outDir: "types-out" },
        include: ["pipeline.ts"],
      }),
    );
    writeFileSync(join(project, "pipeline.ts"), JOB_TS);
    writeFileSync(join(project, "pipeline.js"), JOB_JS);
    const typescript = (require("typescript/package.json") as { version: string }).version;
    run("npm", ["install", tarball, `typescript@${typescript}`, "--ignore-scripts", ...NPM_FLAGS], project);
    // better-sqlite3 compiles from source at install (about a minute here); install scripts are
    // skipped above and the binary this checkout built for the same version is copied in instead.
    const ours = require("better-sqlite3/package.json") as { version: string };
    const theirs = JSON.parse(readFileSync(join(project, "node_modules/better-sqlite3/package.json"), "utf8")) as { version: string };
    expect(theirs.version).toBe(ours.version);
    cpSync(join(ROOT, "node_modules/better-sqlite3/build"), join(project, "node_modules/better-sqlite3/build"), { recursive: true });
  }, 300_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it("ships the compiled JavaScript, its declarations and the license, not the tests, benches or CI", () => {
    const files = run("tar", ["tzf", tarball], scratch).split("\n").filter(Boolean).map((f) => f.replace(/^package\//, ""));
    for (const file of ["dist/sdk/index.js", "dist/sdk/index.d.ts", "dist/app/main.js", "bin/jobhouse.mjs", "LICENSE", "README.md", "web/dist/index.html"]) expect(files, file).toContain(file);
    for (const prefix of ["src/", "test/", "bench/", ".ci/", "node_modules/"]) expect(files.filter((f) => f.startsWith(prefix)), prefix).toEqual([]);
    const manifest = JSON.parse(readFileSync(join(project, "node_modules/jobhouse/package.json"), "utf8")) as { exports: Record<string, { types: string }> };
    expect(manifest.exports["."]!.types).toBe("./dist/sdk/index.d.ts");
  });

  it("type-checks a job file with the consumer's own tsc, and its types are real", () => {
    run(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", "."], project);
    writeFileSync(join(project, "pipeline.ts"), `${JOB_TS}export const wrong = add({ a: "one", b: 2 });\n`);
    const { status, output } = runFailing(process.execPath, [join(project, "node_modules/typescript/bin/tsc"), "-p", "."], project);
    writeFileSync(join(project, "pipeline.ts"), JOB_TS);
    expect(status).not.toBe(0);
    expect(output).toMatch(/pipeline\.ts\(4,\d+\): error TS2322: Type 'string' is not assignable to type 'Ref<number>'/);
    // Two full tsc runs: about 30 s beside the other suites, over 60 s on a busier machine.
  }, 180_000);

  it("imports a .js job file under plain node without loading the server's databases", () => {
    const script = `
      import { createRequire } from "node:module";
      const jobs = await import("./pipeline.js");
      const loaded = Object.keys(createRequire(import.meta.url).cache).filter((path) => /node_modules\\/(better-sqlite3|chdb|pg|@clickhouse|fastify)\\//.test(path));
      console.log(JSON.stringify({ job: typeof jobs.pipeline, task: typeof jobs.add, loaded }));`;
    const result = JSON.parse(run(process.execPath, ["--input-type=module", "-e", script], project)) as { job: string; task: string; loaded: string[] };
    expect(result).toEqual({ job: "object", task: "function", loaded: [] });
  });

  it("runs a .js and a .ts job with the package's binary", () => {
    const bin = join(project, "node_modules/.bin/jobhouse");
    const env = { SERVICE_HOME: join(project, ".jobhouse"), NO_COLOR: "1" };
    for (const file of ["pipeline.js", "pipeline.ts"]) {
      const output = run(bin, ["run-job", `${file}:pipeline`, "--kwargs", '{"n": 5}', "--wait"], project, env);
      expect(output, file).toMatch(/COMPLETED in \d+ ms\s+result: 16/);
    }
    // Found by trying the product: the installed package's examples lie under the project's
    // node_modules, and were refused as an installed package's files (so a first start registered
    // none of them).
    const example = run(bin, ["run-job", "examples/primes.ts:countPrimes", "--kwargs", '{"limit": 100, "chunks": 2}', "--wait"], project, env);
    expect(example).toMatch(/COMPLETED in \d+ ms\s+result: 25/);
    const registered = JSON.parse(run(bin, ["register-job", "examples/primes.ts:countPrimes", "--json"], project, env)) as { entrypoint: string };
    expect(registered.entrypoint).toBe("examples/primes.ts:countPrimes");
  });
});
