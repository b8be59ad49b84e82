/**
 * Group commit: calls made while the event loop is busy with other work are answered by one batch call. The
 * first call schedules a flush for the next turn of the event loop (so every task that reached the same point in
 * this turn joins it); calls made while a flush is running wait for it and go together in the next one. Under
 * load batches grow by themselves; alone, a call costs one event-loop turn.
 *
 * Each call gets its own answer (the batch function answers in the items' order). When a batch of several fails
 * and `isolate` says the failure may be one item's (not the store being away), each item is tried alone, so one
 * bad item fails only its own call.
 */
export class Coalescer<I, R> {
  private pending: { readonly item: I; readonly resolve: (r: R) => void; readonly reject: (e: unknown) => void }[] = [];
  private flushing = false;
  private scheduled = false;

  constructor(
    private readonly run: (items: readonly I[]) => Promise<readonly R[]>,
    private readonly options: { readonly maxBatch: number; readonly isolate?: (error: unknown) => boolean },
  ) {}

  submit(item: I): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.pending.push({ item, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  private async flush(): Promise<void> {
    const batch = this.pending.splice(0, Math.max(1, this.options.maxBatch));
    if (batch.length === 0) return;
    this.flushing = true;
    try {
      await this.answer(batch);
    } finally {
      this.flushing = false;
      if (this.pending.length > 0) this.schedule();
    }
  }

  private async answer(batch: typeof this.pending): Promise<void> {
    try {
      const results = await this.run(batch.map((b) => b.item));
      batch.forEach((b, i) => b.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1 || !(this.options.isolate?.(err) ?? false)) {
        for (const b of batch) b.reject(err);
        return;
      }
      for (const b of batch) await this.answer([b]);
    }
  }
}
