// A worker: registers itself, claims ready tasks up to its concurrency, runs them, heartbeats, and
// stops when told to (STOPPING), when declared LOST, or after max_tasks.

import { hostname } from "node:os";
import type { Store } from "../store/db.js";
import { type ClaimRequest, type ClaimResult, claimGatedTasks, claimReadyTasks } from "../store/claims.js";
import { FailureStreak } from "../core/failure-streak.js";
import type { TaskRow } from "../store/schema.js";
import { listTasksHeldBy } from "../store/tasks.js";
import { findRevokedTasks } from "../store/transitions.js";
import { type AttemptCounts, NO_ATTEMPTS, insertWorker, markWorkerStopped, recordHeartbeat } from "../store/workers.js";
import { type EngineDeps, type RunningAttempt, abandonAttempt, finishJob, interruptAttempt, retryHeldAttempts, returnUnstartedClaims, startAttempt } from "./runner.js";

/** How long a job that may have ended waits for a claim to ask about it before it is asked alone. */
const SETTLE_DELAY_MS = 20;
/**
 * How long after its claim a task this worker holds but does not run counts as lost track of: a
 * margin only, since claims still in flight are known (see claimsInFlight). It was 10 s, and each
 * blip of the store held a job up that long.
 */
const LOST_TRACK_AFTER_MS = 2_000;
const attemptName = (taskId: bigint, attempt: number) => `${taskId}:${attempt}`;
/** The longest pause between claims while the store does not answer. */
const CLAIM_BACKOFF_MAX_MS = 5_000;

export interface WorkerOptions {
  concurrency: number;
  maxTasks: number | null;
  /** Fallback polling for work made by other processes (in-process work wakes the loop at once). */
  pollMs?: number;
  /** Well inside SERVICE_WORKER_TIMEOUT, so a healthy worker is never declared lost. */
  heartbeatMs: number;
  /** How often running tasks are checked for cancellation. */
  revokeCheckMs?: number;
}

export class Worker {
  readonly id: bigint;
  private readonly running = new Map<bigint, RunningAttempt>();
  /** The store says this worker is LOST (or gone): it stopped on that verdict, not on a request. */
  declaredLost = false;
  /**
   * Claims asked for whose tasks are not started yet (a claim, or a completion's claim until its
   * attempt settles): tasks they took are RUNNING here in the store before this worker runs them.
   */
  private readonly claimsInFlight = new Set<ClaimRequest>();
  /** A sweep for tasks lost track of is under way (heartbeats may overlap). */
  private sweeping = false;
  /** Attempts that ran here but whose outcome the store did not take (see recoverLostTrack). */
  private readonly ranUnrecorded = new Set<string>();
  private started = 0;
  /** Claims that failed in a row (the store does not answer): they back off. */
  private readonly claimFailures: FailureStreak;
  private readonly heartbeatFailures: FailureStreak;
  private readonly revocationCheckFailures: FailureStreak;
  /** Completions not yet added to the worker's row (see reportCompletions). */
  private unreported: AttemptCounts = { ...NO_ATTEMPTS };
  /** Jobs in which this worker completed a task since its last claim: has one of them ended? */
  private mayHaveEnded = new Set<bigint>();
  /** When the oldest of `mayHaveEnded` is to be asked about even if no claim comes first. */
  private settleDueAt = 0;
  /** Slots whose completing attempt is claiming their next task (counted against max_tasks). */
  private reservedSlots = 0;
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  /** When the next waiting task becomes ready, as the last empty claim saw it. */
  private nextReadyAt: number | undefined;
  /** A wake-up that came while the loop was claiming: the next sleep returns at once. */
  private wokenWhileBusy = false;
  private loop: Promise<void> | null = null;
  private timers: NodeJS.Timeout[] = [];
  private unsubscribe: () => void = () => undefined;

  constructor(
    private readonly deps: EngineDeps,
    private readonly options: WorkerOptions,
  ) {
    this.id = deps.ids.next();
    this.claimFailures = new FailureStreak(deps.log, `worker ${this.id}: claiming`);
    this.heartbeatFailures = new FailureStreak(deps.log, `worker ${this.id}: heartbeat`);
    this.revocationCheckFailures = new FailureStreak(deps.log, `worker ${this.id}: cancellation check`);
  }

  get db(): Store {
    return this.deps.db;
  }

  async start(): Promise<void> {
    // Work made anywhere in this process (a run started, a task finished) wakes the claim loop at once.
    this.unsubscribe = this.deps.changes.subscribe(({ ready }) => {
      if (ready) this.wake();
    });
    try {
      await insertWorker(this.db, {
        id: this.id,
        hostname: hostname(),
        pid: process.pid,
        concurrency: this.options.concurrency,
        maxTasks: this.options.maxTasks,
        nowMs: this.deps.clock.now(),
      });
    } catch (error) {
      this.unsubscribe();
      throw error;
    }
    this.timers.push(setInterval(() => void this.heartbeat(), this.options.heartbeatMs));
    this.timers.push(setInterval(() => void this.checkRevoked(), this.options.revokeCheckMs ?? 250));
    this.timers.forEach((t) => t.unref());
    this.loop = this.run();
  }

  /** Claim now: called when this process made tasks ready. */
  wake(): void {
    if (this.wakeUp) this.wakeUp();
    else this.wokenWhileBusy = true;
  }

  /**
   * Graceful stop: claim nothing more, let running attempts finish, then record STOPPED. Given
   * `graceMs` (a signal, CONTRACT §9), attempts still running after it fail and are retried
   * elsewhere if they have attempts left; without it, every attempt is waited for.
   */
  async stop(graceMs?: number): Promise<void> {
    this.stopping = true;
    this.wake();
    const deadline =
      graceMs === undefined
        ? undefined
        : setTimeout(() => {
            const why = `the worker stopped before the task finished (its grace period of ${graceMs / 1000} s ran out)`;
            for (const attempt of this.running.values()) interruptAttempt(attempt, why);
          }, graceMs);
    try {
      await this.loop;
    } finally {
      clearTimeout(deadline);
    }
  }

  /** Settles when the loop has ended on its own (stop_worker, LOST, max_tasks). */
  finished(): Promise<void> {
    return this.loop ?? Promise.resolve();
  }

  private async run(): Promise<void> {
    try {
      while (!this.stopping) {
        const free = this.options.concurrency - this.running.size;
        const budget = this.options.maxTasks === null ? free : Math.min(free, this.options.maxTasks - this.started - this.reservedSlots);
        if (this.options.maxTasks !== null && this.started >= this.options.maxTasks) this.stopping = true;
        // With every slot busy, jobs that may have ended are asked about on their own once they
        // have waited SETTLE_DELAY_MS (while work flows, a completion's claim asks sooner).
        const settleDue = this.hasAskableCandidates() && this.deps.clock.now() >= this.settleDueAt;
        const claimed = budget > 0 || settleDue ? await this.claim(Math.max(0, budget)) : 0;
        if (claimed === 0 && !this.stopping) {
          if (this.running.size === 0) await this.reportCompletions();
          await this.sleep();
        }
      }
      // A completion's claim made just before the stop may still start a task: wait for those too.
      // No claim follows to ask whether a job ended, so each is asked as its task here ends: asked
      // only after the last one, a job finished here stayed RUNNING for as long as another job's
      // long task ran on (found by trying the product: 30-75 s with another worker ACTIVE).
      for (;;) {
        await this.finishCandidates();
        if (this.running.size === 0) break;
        await Promise.race([...this.running.values()].map((a) => a.done));
      }
    } finally {
      this.unsubscribe();
      this.timers.forEach(clearInterval);
      await markWorkerStopped(this.db, this.id, this.deps.clock.now(), this.takeUnreported()).catch(() => undefined);
    }
  }

  private async claim(budget: number): Promise<number> {
    const request = this.claimRequest(budget);
    let pauseMs: number;
    try {
      const claimed = await this.accept(await claimReadyTasks(this.db, request));
      this.claimFailures.succeeded();
      // Slots left: tasks behind run limits, claimed gate by gate (claims.ts claimGatedTasks).
      const left = budget - claimed;
      if (left <= 0 || this.stopping) return claimed;
      const gated = await claimGatedTasks(this.db, Object.assign({}, request, { limit: left, settledCandidates: [] }));
      // Nothing behind a gate was free: that says nothing of this worker's status.
      return gated.tasks.length === 0 ? claimed : claimed + (await this.accept(gated));
    } catch (error) {
      this.returnCandidates(request);
      // Backing off: a store that does not answer was asked again every few milliseconds, each
      // failure a log line.
      pauseMs = Math.min(CLAIM_BACKOFF_MAX_MS, 100 * 2 ** this.claimFailures.length);
      this.claimFailures.failed(error, `retrying in ${pauseMs} ms`);
    } finally {
      // What it took was started (accept starts tasks before its first await), or it failed.
      this.claimsInFlight.delete(request);
    }
    await new Promise((resolve) => setTimeout(resolve, pauseMs));
    return 0;
  }

  /** A claim of `limit` tasks that also asks which of this worker's recent jobs have ended. */
  private claimRequest(limit: number, nowMs = this.deps.clock.now()): ClaimRequest {
    const request = { workerId: this.id, limit, nowMs, logDir: this.deps.config.logDir, settledCandidates: this.takeCandidates() };
    this.claimsInFlight.add(request);
    return request;
  }

  /** Asked again at the next claim (finishing a job twice is harmless: it is guarded). */
  private returnCandidates(request: ClaimRequest): void {
    for (const jobId of request.settledCandidates ?? []) this.noteMayHaveEnded(jobId);
  }

  /** Starts what a claim took (synchronously: the slots are taken before this returns its promise), then ends the jobs it found settled. */
  private async accept(claim: ClaimResult): Promise<number> {
    this.nextReadyAt = claim.nextReadyAt;
    for (const jobId of claim.startedJobs) this.deps.changes.publish({ type: "job", id: jobId, status: "RUNNING" });
    // Only an ACTIVE worker's claim takes tasks; a stopping one still ends the jobs it asked about.
    for (const task of claim.tasks) this.startTask(task);
    if (claim.workerStatus !== "ACTIVE") this.obey(claim.workerStatus);
    for (const jobId of claim.settledJobs) await finishJob(this.deps, jobId);
    return claim.tasks.length;
  }

  private startTask(task: TaskRow): void {
    this.deps.changes.publish({ type: "task", id: task.id, jobId: task.job_id, status: "RUNNING", attempt: Number(task.attempt) });
    this.started += 1;
    const attempt = startAttempt(this.deps, task, this.id, {
      nextClaim: (nowMs) => this.slotClaimRequest(nowMs),
      settled: ({ ended, request, claim }) => {
        if (request) this.reservedSlots -= 1;
        if (ended === "completed") this.unreported.completed += 1;
        else if (ended === "failed") this.unreported.failed += 1;
        else if (ended === "unrecorded") this.ranUnrecorded.add(attemptName(task.id, Number(task.attempt)));
        // The attempt no longer runs here once it has settled, its cleanup included, not when its
        // outcome committed: the temp objects a job's last task no longer needs are dropped before
        // the job is reported ended (CONTRACT §4 preservation_mode NONE).
        // Only this attempt's entry: a retry of the task may have been claimed here meanwhile.
        if (this.running.get(task.id) === attempt) this.running.delete(task.id);
        // However it ended (an attempt whose cleanup failed ends "none" after its outcome was
        // recorded), its job may have ended with it; asking twice is harmless.
        this.noteMayHaveEnded(task.job_id);
        if (claim) {
          void this.accept(claim).catch((error) => {
            this.returnCandidates(request!);
            this.deps.log.warn(`worker ${this.id}: ${(error as Error).message}`);
          });
        } else if (request) this.returnCandidates(request);
        // After accept: the tasks it took run here now (it starts them before its first await).
        if (request) this.claimsInFlight.delete(request);
        // A slot left free, or a task that may have made others ready: claim again.
        if (!claim || claim.tasks.length === 0) this.wake();
      },
    });
    this.running.set(task.id, attempt);
  }

  /** Ends the jobs that may have ended, asking directly rather than with a claim. */
  private async finishCandidates(): Promise<void> {
    for (const jobId of this.takeCandidates()) await finishJob(this.deps, jobId).catch((error) => this.deps.log.warn(`job ${jobId}: ${(error as Error).message}`));
  }

  /** The claim a completing attempt makes for its own slot, or none when the worker takes no more. */
  private slotClaimRequest(nowMs: number): ClaimRequest | undefined {
    if (this.stopping) return undefined;
    if (this.options.maxTasks !== null && this.started + this.reservedSlots >= this.options.maxTasks) return undefined;
    this.reservedSlots += 1;
    return this.claimRequest(1, nowMs);
  }

  /**
   * A job with a task still running here has not ended, and is asked about when that task settles,
   * not before: during a fan-out every completion would otherwise ask, and the answer (no) costs
   * PostgreSQL a walk over the job's index entries that earlier claims left dead.
   */
  private noteMayHaveEnded(jobId: bigint): void {
    if (this.runsTaskOf(jobId)) return;
    if (this.mayHaveEnded.size === 0) this.settleDueAt = this.deps.clock.now() + SETTLE_DELAY_MS;
    this.mayHaveEnded.add(jobId);
  }

  private sleep(): Promise<void> {
    if (this.wokenWhileBusy) {
      // What woke us may have committed after the claim that just came back empty.
      this.wokenWhileBusy = false;
      return new Promise((resolve) => setImmediate(resolve));
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      // Until the next poll, or sooner when a waiting task (a retry after its backoff) is due.
      const pollMs = this.options.pollMs ?? 100;
      const now = this.deps.clock.now();
      // A waiting task's due time matters only to a free slot, and a job only while it can be asked
      // about: either otherwise would wake the loop at once, again and again, to claim nothing.
      const slotFree = this.running.size < this.options.concurrency;
      const dueInMs = this.nextReadyAt === undefined || !slotFree ? pollMs : Math.max(0, this.nextReadyAt - now);
      const settleInMs = this.hasAskableCandidates() ? Math.max(0, this.settleDueAt - now) : pollMs;
      const timer = setTimeout(done, Math.min(pollMs, dueInMs, settleInMs));
      // Resolve after pending I/O callbacks: attempts finishing together free their slots before
      // the next claim, which then takes several tasks in one statement instead of one each.
      this.wakeUp = () => {
        this.wakeUp = null;
        setImmediate(done);
      };
    });
  }

  private async heartbeat(): Promise<void> {
    const counts = this.takeUnreported();
    try {
      this.obey(await recordHeartbeat(this.db, this.id, this.deps.clock.now(), counts));
      this.heartbeatFailures.succeeded();
    } catch (error) {
      this.unreported.completed += counts.completed;
      this.unreported.failed += counts.failed;
      this.heartbeatFailures.failed(error);
      return;
    }
    await this.recoverLostTrack().catch((error: unknown) => this.deps.log.warn(`worker ${this.id}: the check for tasks it lost track of failed: ${(error as Error).message}`));
  }

  /**
   * Tasks the store says run here but this worker does not run. Nobody else would ever run them
   * (this worker is alive), so:
   * - a claim (or a completion's claim) that committed while its connection dropped, its answer
   *   never seen: no attempt ran, and the task goes back to PENDING uncounted;
   * - an attempt that ran but whose outcome the store never took (recordThroughOutage gave up):
   *   it fails as an attempt and is retried, as a lost worker's are.
   * A claim just made may not be started yet: only tasks claimed LOST_TRACK_AFTER_MS ago, and
   * before any claim still in flight, count.
   */
  private async recoverLostTrack(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      await this.sweepLostTrack();
    } finally {
      this.sweeping = false;
    }
  }

  private async sweepLostTrack(): Promise<void> {
    // A task taken by a claim still in flight, or by one made after this sweep began, is not lost:
    // it starts when that claim's answer comes. Claims record their own instant as claimed_at.
    const now = this.deps.clock.now();
    const inFlightSince = Math.min(now, ...[...this.claimsInFlight].map((request) => request.nowMs));
    const before = Math.min(now - LOST_TRACK_AFTER_MS, inFlightSince);
    const runsHere = (task: TaskRow) => this.running.get(task.id)?.key.attempt === Number(task.attempt);
    const held = await listTasksHeldBy(this.db, this.id);
    // An attempt whose outcome went unrecorded and that the store no longer holds here was settled
    // otherwise (cancelled, or found by the lost-worker reaper): nothing is left to do for it.
    const heldNames = new Set(held.map((task) => attemptName(task.id, Number(task.attempt))));
    for (const name of this.ranUnrecorded) if (!heldNames.has(name)) this.ranUnrecorded.delete(name);
    const lost = held.filter((task) => !runsHere(task) && Number(task.claimed_at ?? task.started_at ?? 0) < before);
    if (lost.length === 0) return;
    const ran = lost.filter((task) => this.ranUnrecorded.has(attemptName(task.id, Number(task.attempt))));
    const neverStarted = lost.filter((task) => !ran.includes(task));
    if (neverStarted.length > 0) {
      this.deps.log.warn(`worker ${this.id} holds ${neverStarted.length} task(s) it never started (a claim whose answer was lost with a store connection): returning them to PENDING`);
      await returnUnstartedClaims(this.deps, this.id, neverStarted);
    }
    if (ran.length > 0) {
      this.deps.log.warn(`worker ${this.id} holds ${ran.length} task(s) whose outcome could not be recorded: failing them as attempts, to be retried`);
      this.unreported.failed += await retryHeldAttempts(this.deps, this.id, ran, (attempt) => `worker ${this.id} could not record the outcome of attempt ${attempt} (the store did not answer)`);
    }
  }

  /**
   * The worker's completed and failed counts travel with heartbeats and are brought up to date
   * whenever the worker runs dry, not in each completion: every worker's completions would
   * otherwise queue on its one row (and the claim's FOR SHARE on it behind them). See AttemptCounts.
   */
  private async reportCompletions(): Promise<void> {
    if (this.unreported.completed + this.unreported.failed > 0) await this.heartbeat();
  }

  private runsTaskOf(jobId: bigint): boolean {
    for (const attempt of this.running.values()) if (attempt.jobId === jobId) return true;
    return false;
  }

  /** Whether a job that may have ended can be asked about now (none of its tasks runs here). */
  private hasAskableCandidates(): boolean {
    for (const jobId of this.mayHaveEnded) if (!this.runsTaskOf(jobId)) return true;
    return false;
  }

  /**
   * The jobs to ask about now. One that started a task here again since it was noted is dropped:
   * that task's settling notes it again (noteMayHaveEnded).
   */
  private takeCandidates(): bigint[] {
    const jobs = [...this.mayHaveEnded].filter((jobId) => !this.runsTaskOf(jobId));
    this.mayHaveEnded.clear();
    return jobs;
  }

  private takeUnreported(): AttemptCounts {
    const counts = this.unreported;
    this.unreported = { ...NO_ATTEMPTS };
    return counts;
  }

  /** Acts on the status SQL holds for this worker (set by stop_worker or the lost-worker reaper). */
  private obey(status: string | undefined): void {
    if (this.stopping || status === "ACTIVE") return;
    this.stopping = true;
    if (status === "STOPPING") {
      this.deps.log.info(`worker ${this.id} was asked to stop`);
    } else {
      // CONTRACT §3: a LOST worker that speaks again is told to exit; its tasks were already retried.
      this.declaredLost = true;
      this.deps.log.warn(`worker ${this.id} is ${status ?? "gone"}: abandoning its tasks and exiting`);
      for (const attempt of this.running.values()) abandonAttempt(attempt, "worker declared lost");
    }
    this.wake();
  }

  private async checkRevoked(): Promise<void> {
    if (this.running.size === 0) return;
    try {
      const running = [...this.running.values()].map((a) => ({ id: a.key.taskId, attempt: a.key.attempt }));
      // A reassigned task (its worker declared lost) shows up here too: it is no longer ours to run.
      const revoked = await findRevokedTasks(this.db, this.id, running);
      for (const id of revoked) {
        const attempt = this.running.get(id);
        if (attempt) abandonAttempt(attempt, "task was cancelled or reassigned: stopping it");
      }
      this.revocationCheckFailures.succeeded();
    } catch (error) {
      this.revocationCheckFailures.failed(error);
    }
  }
}
