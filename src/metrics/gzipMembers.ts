/**
 * Text compressed as it is produced, piece by piece, into gzip members of about `memberChars`
 * characters each. A gzip stream may hold several members and decompresses to their concatenation, so
 * the members sent one after the other are one valid body; rendering a family of 5,000 sites' lines
 * this way holds a few hundred kilobytes of text at a time instead of the family's whole text (tens of
 * megabytes), its copy as bytes and the list of its pieces, all at once.
 */
import { gzipSync } from "node:zlib";
import { ownedBytes } from "../util/ownedBytes.js";

/** Text per member: large enough that a member's header and fresh dictionary cost nothing measurable. */
export const MEMBER_TEXT_CHARS = 256 * 1024;

/**
 * Level 1: scrapes are frequent and the text compresses well anyway. What this returns is kept (by the
 * store until its family changes, by the exposition while its body is served), so the bytes get
 * memory of their own.
 */
export const gzipText = (text: string): Buffer => ownedBytes(gzipSync(text, { level: 1 }));

export class GzipMembers {
  private readonly members: Buffer[] = [];
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(private readonly memberChars = MEMBER_TEXT_CHARS) {}

  add(text: string): void {
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= this.memberChars) this.flush();
  }

  /** The members, the text given since the last one included (at least one member, maybe of no text). */
  finish(): Buffer[] {
    if (this.pendingChars > 0 || this.members.length === 0) this.flush();
    return this.members;
  }

  private flush(): void {
    this.members.push(gzipText(this.pending.join("")));
    this.pending = [];
    this.pendingChars = 0;
  }
}
