// The Durable Object of one owner's batch work (one instance per key; docs/api.md, "Batches"): its
// files' records (their bytes in R2), its batches and their lines, and the runner that takes each
// line through the Worker's pipeline on idle capacity, driven by alarms and by each line's end.
// Another key's ids do not exist here: they are another instance's.
import { DurableObject } from "cloudflare:workers";
import { BatchLineMark } from "../auth/batch-line.ts";
import { loadConfig } from "../config/load-config.ts";
import { randomId } from "../lib/ids.ts";
import { advance, TERMINAL, windowSeconds, type Batch } from "./batch-object.ts";
import { BatchRows, type FileRecord, type LineRow } from "./batch-rows.ts";
import { finishBatch, validateBatch } from "./batch-steps.ts";
import { interactiveWaitingFor } from "./interactive-load.ts";
import { runLine, type Dispatch } from "./run-line.ts";
import type { BatchEndpoint } from "./batch-lines.ts";

/** How often the alarm looks while a batch is active (lines also start as soon as one ends). */
const TICK_MS = 1000;

export type Refusal = { error: { status: number; code: string; message: string; param?: string } };

export class BatchStore extends DurableObject<Env> {
  /** The app's fetch, set by src/index.ts (the app sits above this layer). */
  static dispatch: Dispatch | undefined;

  private readonly rows: BatchRows;
  /** Lines in flight here, by `<batch>:<line>`, each with its abort (cancel and expiry end them at once). */
  private readonly running = new Map<string, { run: Promise<void>; abort: AbortController }>();
  /** Lines put back (no idle slot, the key's limits): not before this time. */
  private readonly notBefore = new Map<string, number>();
  private stepping = false;
  private again = false;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.rows = new BatchRows(ctx.storage.sql);
    // Lines that were running when the object stopped run again (at least once).
    this.rows.requeueRunning();
  }

  private get limits() {
    return loadConfig(this.env).batch;
  }

  // ---- files ----

  /** Records an uploaded file (its bytes already in R2 under `r2Key`); a refusal when the owner holds too many. */
  addFile(file: FileRecord): FileRecord | Refusal {
    this.prune();
    const max = this.limits.maxFilesPerKey;
    if (this.rows.fileCount() >= max) return { error: { status: 400, code: "too_many_files", message: `Your key holds ${max} files, the most it may (batch.maxFilesPerKey): delete some (DELETE /v1/files/{id}) before uploading more.` } };
    this.rows.putFile(file);
    return file;
  }

  getFile(id: string): FileRecord | null {
    this.prune();
    return this.rows.file(id);
  }

  listFiles(opts: { after?: string; limit: number; purpose?: string; order: "asc" | "desc" }): { data: FileRecord[]; has_more: boolean } {
    this.prune();
    return this.rows.files(opts);
  }

  async deleteFile(id: string): Promise<boolean> {
    const file = this.rows.file(id);
    if (!file) return false;
    this.rows.deleteFile(id);
    await this.env.BATCH_FILES.delete(file.r2Key);
    return true;
  }

  // ---- batches ----

  async createBatch(input: { keyId: string | null; allowed: string[] | null; input_file_id: string; endpoint: BatchEndpoint; completion_window: string; metadata: Record<string, string> | null }): Promise<Batch | Refusal> {
    const file = this.rows.file(input.input_file_id);
    if (!file) return { error: { status: 404, code: "not_found", param: "input_file_id", message: `No file with id '${input.input_file_id}' is uploaded for your key: upload it with POST /v1/files (purpose "batch") first.` } };
    if (file.purpose !== "batch") return { error: { status: 400, code: "invalid_value", param: "input_file_id", message: `The file '${file.id}' has purpose "${file.purpose}"; a batch's input file is uploaded with purpose "batch".` } };
    const window = windowSeconds(input.completion_window)!;
    const now = Math.floor(Date.now() / 1000);
    const batch: Batch = {
      id: randomId("batch_", 24),
      object: "batch",
      endpoint: input.endpoint,
      model: null,
      errors: null,
      input_file_id: file.id,
      completion_window: input.completion_window,
      status: "validating",
      output_file_id: null,
      error_file_id: null,
      created_at: now,
      in_progress_at: null,
      expires_at: now + window,
      finalizing_at: null,
      completed_at: null,
      failed_at: null,
      expired_at: null,
      cancelling_at: null,
      cancelled_at: null,
      request_counts: { total: 0, completed: 0, failed: 0 },
      usage: { input_tokens: 0, input_tokens_details: { cached_tokens: 0 }, output_tokens: 0, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 0 },
      metadata: input.metadata,
    };
    this.rows.putBatch(batch, { keyId: input.keyId, allowed: input.allowed, expiring: false });
    this.kick();
    return batch;
  }

  getBatch(id: string): Batch | null {
    return this.rows.batch(id);
  }

  listBatches(opts: { after?: string; limit: number }): { data: Batch[]; has_more: boolean } {
    this.prune();
    return this.rows.batches(opts);
  }

  /** Cancel: no new line starts from now; the batch is `cancelled` once its running lines end. */
  cancelBatch(id: string): Batch | null {
    const batch = this.rows.batch(id);
    if (!batch) return null;
    const moved = advance(batch, "cancel", Math.floor(Date.now() / 1000));
    if (moved !== batch) {
      this.rows.saveBatch(moved);
      this.abortLines(id);
    }
    this.kick();
    return this.rows.batch(id);
  }

  /** What the status page shows of this owner's batches: the ones not finished, with their counts. */
  active(): Batch[] {
    return this.rows.activeBatches();
  }

  // ---- the runner ----

  override async alarm(): Promise<void> {
    // The alarm running now is spent (getAlarm still names it until it returns): the next one first.
    if (this.rows.activeBatches().length) await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
    await this.step();
  }

  private kick(): void {
    this.ctx.waitUntil(this.step());
  }

  private async step(): Promise<void> {
    if (this.stepping) {
      this.again = true;
      return;
    }
    this.stepping = true;
    try {
      do {
        this.again = false;
        await this.stepOnce();
      } while (this.again);
    } finally {
      this.stepping = false;
    }
    // The alarm is the runner's backstop while a batch is active (a line's end also steps it): set
    // once, not on every step, and again by the alarm itself.
    if (this.rows.activeBatches().length && (await this.ctx.storage.getAlarm()) === null) await this.ctx.storage.setAlarm(Date.now() + TICK_MS);
  }

  /** Each active batch moved on (validated, expired, cancelled, finished), then idle slots filled with lines. */
  private async stepOnce(): Promise<void> {
    const nowS = Math.floor(Date.now() / 1000);
    for (const batch of this.rows.activeBatches()) {
      const meta = this.rows.batchMeta(batch.id)!;
      let b = batch;
      if (b.status === "validating") b = await validateBatch(this.rows, this.env, b, meta, this.limits.maxLines, nowS);
      if ((b.status === "in_progress" || b.status === "validating") && b.expires_at !== null && nowS >= b.expires_at) {
        b = advance(b, "expire", nowS);
        this.rows.saveBatch(b, { expiring: true });
        this.abortLines(b.id);
      }
      if (b.status === "in_progress" && !this.rows.hasPending(b.id) && !this.runningOf(b.id)) {
        b = advance(b, "drained", nowS);
        this.rows.saveBatch(b);
      }
      if ((b.status === "finalizing" || b.status === "cancelling") && !this.runningOf(b.id)) {
        await finishBatch(this.rows, this.env, b, this.rows.batchMeta(b.id)!.expiring, this.limits.retentionDays, nowS);
      }
    }
    await this.startLines();
  }

  /**
   * Ends the batch's lines in flight (cancel, expiry): one still waiting for a slot leaves the line at
   * once, one generating stops; each is then a line not run (batch_cancelled, batch_expired).
   */
  private abortLines(batchId: string): void {
    for (const [k, line] of this.running) if (k.startsWith(`${batchId}:`)) line.abort.abort();
  }

  private runningOf(batchId: string): number {
    let n = 0;
    for (const k of this.running.keys()) if (k.startsWith(`${batchId}:`)) n++;
    return n;
  }

  /**
   * Starts lines while fewer than `batch.concurrency` run: the oldest batch first, in file order. A
   * line of a model interactive requests wait for does not start (they would be ahead of it anyway;
   * this keeps the line free of batch waiters): every isolate's waiters at the pool's AdmissionHub
   * when admission is shared, else this isolate's (interactive-load.ts). Asked once per model per step.
   */
  private async startLines(): Promise<void> {
    const dispatch = BatchStore.dispatch;
    if (!dispatch) return;
    const free = this.limits.concurrency - this.running.size;
    if (free <= 0) return;
    const now = Date.now();
    const config = loadConfig(this.env);
    const busy = new Map<string, boolean>();
    const picked: LineRow[] = [];
    for (const line of this.rows.pendingLines(free * 4 + this.notBefore.size)) {
      if (picked.length >= free) break;
      const k = `${line.batch_id}:${line.line}`;
      if (this.running.has(k) || (this.notBefore.get(k) ?? 0) > now) continue;
      let waited = busy.get(line.model);
      if (waited === undefined) busy.set(line.model, (waited = (await interactiveWaitingFor(this.env, config, line.model)).waiting > 0));
      if (!waited) picked.push(line);
    }
    // A line started by another step meanwhile (an await above) is not started twice.
    for (const line of picked) if (!this.running.has(`${line.batch_id}:${line.line}`) && this.running.size < this.limits.concurrency) this.launch(dispatch, line);
  }

  private launch(dispatch: Dispatch, line: LineRow): void {
    const k = `${line.batch_id}:${line.line}`;
    const meta = this.rows.batchMeta(line.batch_id)!;
    this.rows.markRunning(line.batch_id, line.line);
    const ctx = { waitUntil: (p: Promise<unknown>) => this.ctx.waitUntil(p), passThroughOnException() {}, props: {} } as unknown as ExecutionContext;
    const abort = new AbortController();
    const run = runLine(dispatch, this.env, ctx, { endpoint: meta.endpoint, body: JSON.parse(line.body) as Record<string, unknown>, mark: new BatchLineMark(meta.keyId, line.batch_id, line.custom_id), clientId: k, signal: abort.signal })
      .then((outcome) => {
        // A line ended by cancel or expiry is a line not run, unless its answer was complete.
        if (outcome.kind === "later" || (abort.signal.aborted && (outcome.status < 200 || outcome.status >= 300))) {
          if (outcome.kind === "later") this.notBefore.set(k, Date.now() + outcome.afterMs);
          this.rows.markPending(line.batch_id, line.line);
          return;
        }
        this.notBefore.delete(k);
        this.rows.markAnswered(line.batch_id, line.line, randomId("batch_req_", 24), outcome);
      })
      .catch((e: unknown) => {
        if (abort.signal.aborted) return this.rows.markPending(line.batch_id, line.line);
        this.rows.markAnswered(line.batch_id, line.line, randomId("batch_req_", 24), { status: 500, requestId: "", body: { error: { message: String(e), type: "server_error", code: "internal_error", param: null } }, usage: { input: 0, output: 0 } });
      })
      .finally(() => {
        this.running.delete(k);
        this.kick();
      });
    this.running.set(k, { run, abort });
    this.ctx.waitUntil(run);
  }

  /** Files and finished batches past their retention go (R2 objects with them): whenever the owner lists, reads or uploads. */
  private prune(): void {
    const nowS = Math.floor(Date.now() / 1000);
    for (const key of this.rows.pruneExpired(nowS, this.limits.retentionDays * 86400, TERMINAL)) this.ctx.waitUntil(this.env.BATCH_FILES.delete(key));
  }
}
