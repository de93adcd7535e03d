/** The records of one export: prepared pages (or parts of them), with their totals. */
import { slicePage, type PreparedPage } from "../prepared.js";

export class Batch {
  readonly pages: PreparedPage[] = [];
  count = 0;
  bytes = 0;

  add(page: PreparedPage): void {
    if (page.count === 0) return;
    this.pages.push(page);
    this.count += page.count;
    this.bytes += page.bytes.length;
  }

  /** The encoded records, one after the other. */
  concat(): Buffer {
    return this.pages.length === 1
      ? (this.pages[0] as PreparedPage).bytes
      : Buffer.concat(this.pages.map((p) => p.bytes));
  }

  /** The first and the second half of the records (to isolate what a collector refuses). */
  halves(): [Batch, Batch] {
    const half = Math.ceil(this.count / 2);
    const first = new Batch();
    const second = new Batch();
    let seen = 0;
    for (const page of this.pages) {
      const cut = Math.min(Math.max(half - seen, 0), page.count);
      if (cut > 0) first.add(slicePage(page, 0, cut));
      if (cut < page.count) second.add(slicePage(page, cut, page.count));
      seen += page.count;
    }
    return [first, second];
  }
}
