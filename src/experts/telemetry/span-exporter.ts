import { log } from "../../observability/logger";
import type { OtelConfig } from "./otel-config";
import { type Attributes, exportRequest, type JsonSpan } from "./otlp-json";

export interface SpanExporterOptions {
  /** The most spans waiting; what would go beyond is dropped and counted. */
  maxQueue?: number;
  maxBatch?: number;
  /** One attempt's bound: a hanging collector costs a batch this much, never a call. */
  timeoutMs?: number;
  /** Attempts per batch, retryable failures only (OTLP/HTTP: 429, 502, 503, 504, no answer). */
  attempts?: number;
  backoffMs?: number;
  fetch?: (url: string, init: RequestInit) => Promise<Response>;
  sleep?: (ms: number) => Promise<void>;
}

export interface ExportCounts {
  sent: number;
  dropped: number;
  queued: number;
}

const RETRYABLE = new Set([429, 502, 503, 504]);

/**
 * Spans on their way to the tenant's OTLP/HTTP collector, sent in batches off the call path: a
 * run's spans are enqueued after its answer is ready and the flush runs on while the session
 * lives (`ctx.waitUntil`). The queue is bounded, each attempt has a timeout, retryable failures
 * back off, and whatever cannot be sent is dropped, counted and logged as a count: a dead or slow
 * collector costs calls nothing.
 */
export class SpanExporter {
  private queue: JsonSpan[] = [];
  private flushing: Promise<void> | undefined;
  private readonly counts = { sent: 0, dropped: 0 };
  private readonly options: Required<SpanExporterOptions>;

  constructor(
    private readonly config: OtelConfig,
    private readonly resource: Attributes,
    options: SpanExporterOptions = {},
  ) {
    this.options = {
      maxQueue: 2048,
      maxBatch: 512,
      timeoutMs: 5_000,
      attempts: 3,
      backoffMs: 500,
      fetch: (url, init) => fetch(url, init),
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
      ...options,
    };
  }

  /** Queues `spans` and returns the flush under way (for `waitUntil`); it never rejects. */
  enqueue(spans: readonly JsonSpan[]): Promise<void> {
    const room = Math.max(0, this.options.maxQueue - this.queue.length);
    this.queue.push(...spans.slice(0, room));
    if (spans.length > room) this.drop(spans.length - room, "queue full");
    this.flushing ??= this.flush().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  totals(): ExportCounts {
    return { ...this.counts, queued: this.queue.length };
  }

  private async flush(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0, this.options.maxBatch);
      const failure = await this.send(batch);
      if (failure === undefined) this.counts.sent += batch.length;
      else this.drop(batch.length, failure);
    }
  }

  /** Sends one batch with retries; the reason it was given up on, or undefined once sent. */
  private async send(batch: JsonSpan[]): Promise<string | undefined> {
    const body = JSON.stringify(exportRequest(this.resource, batch));
    let reason = "not sent";
    for (let attempt = 0; attempt < this.options.attempts; attempt++) {
      if (attempt > 0) await this.options.sleep(this.options.backoffMs * 2 ** (attempt - 1));
      try {
        const response = await this.options.fetch(this.config.tracesUrl, {
          method: "POST",
          headers: { ...this.config.headers, "content-type": "application/json" },
          body,
          signal: AbortSignal.timeout(this.options.timeoutMs),
        });
        await response.body?.cancel();
        if (response.ok) return undefined;
        reason = `HTTP ${response.status}`;
        if (!RETRYABLE.has(response.status)) return reason;
      } catch (error) {
        reason = error instanceof Error && error.name === "TimeoutError" ? "timeout" : "network error";
      }
    }
    return reason;
  }

  /** Logged as a count with the reason: never the spans, the URL or the headers (which hold the collector's key). */
  private drop(count: number, reason: string): void {
    this.counts.dropped += count;
    log("warn", "OpenTelemetry spans dropped", { dropped: count, droppedTotal: this.counts.dropped, reason });
  }
}
