// Streaming FASTA/FASTQ record scanner for previews: ids and sequence lengths of the first
// records, in constant memory whatever the line lengths (a chromosome can be one 250 MB line).
// It keeps counts, never sequences, and stops once it has its records or has scanned its budget.

/** The id and sequence length of one record. */
export interface RecordSummary {
  readonly id: string;
  readonly length: number;
}

/** How many records a preview lists. */
export const PREVIEW_RECORDS = 5;
/** Longest id kept; ids are the header up to the first whitespace. */
const MAX_ID_BYTES = 200;
const NL = 0x0a;
const CR = 0x0d;

/** Scans FASTA or FASTQ content pushed in pieces. */
export class RecordScanner {
  readonly records: RecordSummary[] = [];
  /** True once the scanner needs no more bytes (enough records, or the budget is spent). */
  done = false;
  /** True when the budget ran out before the records were complete. */
  exhausted = false;
  private scanned = 0;
  private lineStart = true;
  /**
   * FASTA: -1 before the first header, 0 in a header, 1 in sequence lines.
   * FASTQ: -1 between records, 0-3 the record's four lines, 4 right after a record.
   */
  private line = -1;
  private markerPending = false;
  private id: number[] = [];
  private idDone = false;
  private length = 0;
  private pendingCr = false;

  constructor(
    private readonly format: 'fasta' | 'fastq',
    private readonly budget: number,
    private readonly max = PREVIEW_RECORDS,
  ) {}

  /** Scans a piece; returns true when done. */
  push(piece: Uint8Array): boolean {
    if (this.done) return true;
    const over = this.scanned + piece.length > this.budget;
    if (over) piece = piece.subarray(0, Math.max(0, this.budget - this.scanned));
    this.scanned += piece.length;
    let pos = 0;
    while (pos < piece.length && !this.done) {
      if (this.lineStart) {
        this.startLine(piece[pos]!);
        if (this.done) break;
      }
      const nl = piece.indexOf(NL, pos);
      const end = nl === -1 ? piece.length : nl;
      this.consume(piece, pos, end, nl !== -1);
      if (nl === -1) break;
      pos = nl + 1;
      this.endLine();
    }
    if (over && !this.done) {
      this.exhausted = true;
      this.done = true;
    }
    return this.done;
  }

  /** Ends the scan early (damaged content): the record in progress is dropped, not counted. */
  stop(): void {
    this.done = true;
  }

  /** Ends the scan at the end of the content; a record cut only by the end still counts. */
  finish(): RecordSummary[] {
    if (!this.done) {
      if (this.format === 'fasta' ? this.line >= 0 : this.line === 3) this.close();
    }
    this.done = true;
    return this.records;
  }

  private startLine(first: number): void {
    this.lineStart = false;
    if (this.format === 'fasta') {
      if (first !== 0x3e /* > */) return;
      if (this.line >= 0) this.close();
      if (!this.done) this.beginRecord();
      return;
    }
    if (this.line === -1 || this.line === 4) {
      // Blank or stray lines between FASTQ records are skipped; an @ starts the next record
      // (a quality line may start with @ too, which is why records go by line count).
      if (first === 0x40 /* @ */) this.beginRecord();
      else this.line = -1;
      return;
    }
    this.line++;
  }

  private beginRecord(): void {
    this.line = 0;
    this.markerPending = true;
    this.id = [];
    this.idDone = false;
    this.length = 0;
  }

  private consume(piece: Uint8Array, from: number, to: number, lineEnds: boolean): void {
    if (this.line === 0) {
      let i = from;
      if (this.markerPending) {
        this.markerPending = false;
        i++;
      }
      for (; i < to && !this.idDone; i++) {
        const b = piece[i]!;
        if (b === 0x20 || b === 0x09 || b === CR) this.idDone = true;
        else if (this.id.length < MAX_ID_BYTES) this.id.push(b);
      }
      return;
    }
    if (this.line !== 1) return;
    let n = to - from;
    // A CR right before the LF ends the line (CRLF) and counts nothing; it may end one piece
    // while its LF starts the next, so it is held until the next byte is known.
    if (this.pendingCr) {
      this.pendingCr = false;
      if (n > 0) this.length++;
    }
    if (n > 0 && piece[to - 1] === CR) {
      n--;
      if (!lineEnds) this.pendingCr = true;
    }
    this.length += n;
  }

  private endLine(): void {
    this.lineStart = true;
    if (this.line === 0) {
      this.idDone = true;
      if (this.format === 'fasta') this.line = 1;
      return;
    }
    if (this.format === 'fastq' && this.line === 3) this.close();
  }

  private close(): void {
    this.records.push({ id: Buffer.from(this.id).toString('utf8'), length: this.length });
    this.line = this.format === 'fastq' ? 4 : -1;
    if (this.records.length >= this.max) this.done = true;
  }
}
