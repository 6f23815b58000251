// Task threads and their pool: task code and job modules run in worker threads, so a task that
// spins, crashes, calls process.exit or exhausts its heap costs only its own attempt, never the
// worker's event loop (its API, heartbeats and other tasks). A thread runs one thing at a time.

import { Worker } from "node:worker_threads";
import { taskCodeEnvironment } from "../core/config.js";
import { type DataCall, type FromThread, type StrayWork, type InspectOutcome, type InspectRequest, type RunOutcome, type RunRequest, type ThreadSetup, type ToThread, toErrorData } from "./thread-protocol.js";

const THREAD_ENTRY = new URL("../../bin/task-thread.mjs", import.meta.url);

/** How long terminating an idle thread waits for it to end its loaders' child processes. */
const RETIRE_PATIENCE_MS = 2_000;

export interface ThreadOptions {
  setup: ThreadSetup;
  /** Heap limit of each thread (SERVICE_TASK_MEMORY_MB). */
  memoryMb: number;
  /** Told when an attempt's code runs on after the attempt ended (the thread is then replaced). */
  onStray?: (stray: StrayWork) => void;
}

export interface RunHandlers {
  log(level: string, text: string): void;
  data(call: DataCall): Promise<unknown>;
  /** The thread ran another version of the job's files than the run started with. */
  otherVersion?(version: string): void;
}

/** Thrown when the thread itself ended or crashed before it reported an outcome. */
export class ThreadCrash extends Error {
  override name = "ThreadCrash";
}

interface Exchange {
  onMessage(message: FromThread): void;
  fail(error: Error): void;
}

export class TaskThread {
  private readonly worker: Worker;
  private exchange: Exchange | null = null;
  private ended: Error | null = null;
  private terminating = false;
  /** Work of an ended attempt runs on in this thread (see StrayWork): it takes no more tasks. */
  private stray = false;
  /** Settles when the thread has booted (its loaders and the engine's modules are loaded). */
  readonly ready: Promise<void>;
  private markReady!: () => void;

  constructor(private readonly options: ThreadOptions) {
    this.ready = new Promise((resolve) => (this.markReady = resolve));
    this.worker = new Worker(THREAD_ENTRY, {
      workerData: options.setup,
      env: taskCodeEnvironment(),
      resourceLimits: { maxOldGenerationSizeMb: options.memoryMb },
    });
    // An idle thread does not keep the process alive (a one-shot CLI run ends when its job does).
    this.worker.unref();
    this.worker.on("message", (message: FromThread) => {
      if (message.type === "ready") this.markReady();
      else if (message.type === "stray") {
        this.stray = true;
        options.onStray?.(message);
      } else if (message.type === "crash") {
        this.end(new ThreadCrash(`task code threw outside its promise chain: ${message.error.message}`));
        // The thread caught the error (task-thread.ts) and lives on: it is ended here, its leftover
        // work with it (terminate() returns early for a thread that has ended).
        this.terminating = true;
        void this.worker.terminate();
      } else this.exchange?.onMessage(message);
    });
    this.worker.on("error", (error: Error & { code?: string }) => {
      this.end(
        error.code === "ERR_WORKER_OUT_OF_MEMORY"
          ? new ThreadCrash(`the task ran out of memory (its thread's heap limit is ${options.memoryMb} MB, SERVICE_TASK_MEMORY_MB)`)
          : new ThreadCrash(`task code threw outside its promise chain: ${error?.message ?? String(error)}`),
      );
    });
    this.worker.on("exit", (code) => this.end(new ThreadCrash(this.terminating ? "the task's thread was stopped" : `task code ended its thread with process.exit(${code})`)));
  }

  get alive(): boolean {
    return this.ended === null;
  }

  /** Alive and holding no leftover work: it may take another task. */
  get reusable(): boolean {
    return this.alive && !this.stray;
  }

  /** Runs one attempt; rejects with ThreadCrash when the thread dies first. */
  run(request: RunRequest, handlers: RunHandlers): Promise<RunOutcome> {
    return this.talk<RunOutcome>(request, (message, settle) => {
      if (message.type === "log") handlers.log(message.level, message.text);
      else if (message.type === "data") this.answer(message, handlers);
      else if (message.type === "ran") {
        if (message.ranVersion !== undefined) handlers.otherVersion?.(message.ranVersion);
        settle(message);
      }
    });
  }

  inspect(request: InspectRequest): Promise<InspectOutcome> {
    return this.talk<InspectOutcome>(request, (message, settle) => {
      if (message.type === "inspected") settle(message);
    });
  }

  /** Fires the running task's AbortSignal (code that honours it stops by itself). */
  abort(reason: string): void {
    if (this.alive) this.worker.postMessage({ type: "abort", reason } satisfies ToThread);
  }

  /** Ends the thread; an idle one first ends the child processes its loaders started. */
  async terminate(): Promise<void> {
    this.terminating = true;
    if (!this.alive) return;
    if (!this.exchange) await this.retire();
    await this.worker.terminate();
  }

  /** Asks the thread to retire (see RetireRequest), waiting at most RETIRE_PATIENCE_MS. */
  private async retire(): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const patience = new Promise<void>((resolve) => (timer = setTimeout(resolve, RETIRE_PATIENCE_MS)));
    const retired = this.talk<void>({ type: "retire" }, (message, settle) => {
      if (message.type === "retired") settle();
    }).catch(() => undefined);
    await Promise.race([retired, patience]);
    clearTimeout(timer);
  }

  private talk<T>(request: ToThread, handle: (message: FromThread, settle: (value: T) => void) => void): Promise<T> {
    if (this.ended) return Promise.reject(this.ended);
    if (this.exchange) return Promise.reject(new Error("a task thread runs one thing at a time"));
    return new Promise<T>((resolve, reject) => {
      const done = () => (this.exchange = null);
      this.exchange = {
        onMessage: (message) =>
          handle(message, (value) => {
            done();
            resolve(value);
          }),
        fail: (error) => {
          done();
          reject(error);
        },
      };
      this.worker.postMessage(request);
    });
  }

  private answer(call: DataCall, handlers: RunHandlers): void {
    handlers.data(call).then(
      (value) => this.reply({ type: "data-reply", callId: call.callId, ok: true, value }),
      (error: unknown) => this.reply({ type: "data-reply", callId: call.callId, ok: false, error: toErrorData(error) }),
    );
  }

  private reply(message: ToThread): void {
    if (!this.alive) return;
    try {
      this.worker.postMessage(message);
    } catch (error) {
      // A value that cannot be cloned still answers the call, as its error.
      this.worker.postMessage({ type: "data-reply", callId: (message as { callId: number }).callId, ok: false, error: toErrorData(error) } satisfies ToThread);
    }
  }

  private end(error: Error): void {
    if (this.ended) return;
    this.ended = error;
    this.markReady();
    this.exchange?.fail(error);
  }
}

/** At most `size` threads, made on first need and replaced when one ends. */
export class ThreadPool {
  private readonly idle: TaskThread[] = [];
  private readonly all = new Set<TaskThread>();
  private readonly waiting: ((thread: TaskThread) => void)[] = [];
  private closed = false;

  constructor(
    readonly size: number,
    private readonly options: ThreadOptions,
  ) {}

  async acquire(): Promise<TaskThread> {
    if (this.closed) throw new Error("the task thread pool is closed");
    // A thread that died or took on leftover work while idle is replaced, not handed out.
    let idle = this.idle.pop();
    while (idle && !idle.reusable) {
      this.all.delete(idle);
      void idle.terminate();
      idle = this.idle.pop() ?? this.spawn();
    }
    if (idle) return idle;
    if (this.all.size < this.size) return this.spawn();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Hands a thread back; one that may hold a runaway task or rejected module state is replaced at
   * once, so the next task does not wait for a thread to boot.
   */
  release(thread: TaskThread, reusable: boolean): void {
    if (!reusable || !thread.reusable || this.closed) {
      this.all.delete(thread);
      void thread.terminate();
      if (this.closed) return;
      thread = this.spawn();
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter(thread);
    else this.idle.push(thread);
  }

  /** Boots every thread now (a long-running worker), instead of on first need. */
  warm(): void {
    while (!this.closed && this.all.size < this.size) this.idle.push(this.spawn());
  }

  async close(): Promise<void> {
    this.closed = true;
    const threads = [...this.all];
    this.all.clear();
    this.idle.length = 0;
    await Promise.all(threads.map((t) => t.terminate()));
  }

  private spawn(): TaskThread {
    const thread = new TaskThread(this.options);
    this.all.add(thread);
    return thread;
  }
}
