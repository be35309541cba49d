// Watches the bytes of an import as they stream past, once: detects the type from the head,
// builds the text preview, and for FASTA/FASTQ scans the first records (through a streaming
// gunzip when compressed), so a file is never read twice.
import { createGunzip, type Gunzip } from 'node:zlib';
import type { ArtifactRecord } from '../../../abi/index.js';
import { detectType, gunzipHead, HEAD_BYTES, isGzip, isTextType, withTypeOverride, type DetectedType } from './detect-type.js';
import { RecordScanner } from './record-scanner.js';
import { isText } from './sniff-text.js';

type Preview = ArtifactRecord['preview'];

/** Lines and bytes of the text preview. */
export const PREVIEW_LINES = 20;
export const PREVIEW_BYTES = 4096;
/** Most content the record scan reads (decompressed): bounds the work a gzip bomb can cause. */
export const RECORD_SCAN_BYTES = 1024 ** 3;

/**
 * The first PREVIEW_LINES lines or PREVIEW_BYTES bytes of text content, CRLF shown as LF, cut at
 * a character boundary; `truncated` when content goes on past what is shown.
 */
export function textPreview(content: Uint8Array, complete: boolean): { text: string; truncated: boolean } {
  let end = Math.min(content.length, PREVIEW_BYTES);
  let lines = 0;
  for (let i = 0; i < end; i++) {
    if (content[i] === 0x0a && ++lines === PREVIEW_LINES) {
      end = i + 1;
      break;
    }
  }
  while (end > 0 && end < content.length && (content[end]! & 0xc0) === 0x80) end--;
  const text = Buffer.from(content.buffer, content.byteOffset, end).toString('utf8').replace(/\r\n/g, '\n');
  return { text, truncated: end < content.length || !complete };
}

/** Streams pieces in with push(), then end() gives the type and the preview. */
export class ContentInspector {
  private head: Buffer[] = [];
  private headLength = 0;
  private total = 0;
  private detected: DetectedType | undefined;
  private preview: Preview | undefined;
  private scanner: RecordScanner | undefined;
  private gunzip: Gunzip | undefined;

  /** `typeOverride`: the type to record instead of the detected one (already validated). */
  constructor(private readonly typeOverride?: string) {}

  /** Observes the next piece of the content. */
  async push(piece: Uint8Array): Promise<void> {
    this.total += piece.length;
    if (this.detected === undefined) {
      // Copied: a source may reuse its buffer once the piece has been consumed.
      this.head.push(Buffer.from(piece));
      this.headLength += piece.length;
      if (this.headLength >= HEAD_BYTES) await this.inspectHead(false);
      return;
    }
    await this.scan(piece);
  }

  /** The content ended: the detected type (override applied) and the preview. */
  async end(): Promise<{ detected: DetectedType; preview: Preview }> {
    if (this.detected === undefined) await this.inspectHead(true);
    if (this.gunzip !== undefined && !this.gunzip.destroyed) {
      const gz = this.gunzip;
      await new Promise<void>((resolve) => {
        gz.once('close', resolve);
        gz.end();
      });
    }
    const records = this.scanner?.finish();
    const preview = this.preview!;
    return { detected: this.detected!, preview: records === undefined ? preview : { ...preview, records: [...records] } };
  }

  /** Stops any decompression (after a failed import). */
  dispose(): void {
    this.gunzip?.destroy();
  }

  private async inspectHead(ended: boolean): Promise<void> {
    const head = Buffer.concat(this.head, this.headLength);
    this.head = [];
    const window = head.subarray(0, HEAD_BYTES);
    const whole = ended && head.length <= HEAD_BYTES;
    const gzip = isGzip(window);
    const inner = gzip ? gunzipHead(window, whole) : null;
    const content = inner?.bytes ?? window;
    const contentComplete = inner === null ? whole : inner.complete;
    const contentIsText = content.length > 0 && isText(content, contentComplete) && (!gzip || inner !== null);
    // With the type given, detection only has to tell compression (sniffing is the costly part).
    const detected =
      this.typeOverride !== undefined
        ? { type: gzip ? 'gzip' : 'binary', compression: null, media_type: 'application/octet-stream' }
        : detectType(head, { complete: ended });
    this.detected = withTypeOverride(detected, this.typeOverride, contentIsText);
    const type = this.detected.type;
    if (isTextType(type) && contentIsText) this.preview = textPreview(content, contentComplete);
    else this.preview = { text: type === 'empty' ? '' : null, truncated: this.total > 0 };
    if ((type === 'fasta' || type === 'fastq') && contentIsText) {
      this.scanner = new RecordScanner(type, RECORD_SCAN_BYTES);
      if (this.detected.compression === 'gzip') this.startGunzip();
      // The whole buffered head goes to the scan, not only the detection window.
      await this.scan(head);
    }
  }

  private startGunzip(): void {
    const gz = createGunzip();
    // A damaged stream only ends the preview early (the record it cut is not listed, its length
    // would be wrong); the import itself stores the bytes as they are.
    gz.on('error', () => {
      this.scanner!.stop();
      gz.destroy();
    });
    gz.on('data', (out: Buffer) => {
      if (this.scanner!.push(out)) gz.destroy();
    });
    this.gunzip = gz;
  }

  private async scan(piece: Uint8Array): Promise<void> {
    const scanner = this.scanner;
    if (scanner === undefined || scanner.done) return;
    const gz = this.gunzip;
    if (gz === undefined) {
      scanner.push(piece);
      return;
    }
    if (gz.destroyed) return;
    // Waiting for each piece to be inflated keeps memory bounded: the scanner consumes the
    // output as it is produced, and the next piece is fed only after this one.
    await new Promise<void>((resolve) => {
      const done = (): void => {
        gz.off('close', done);
        resolve();
      };
      gz.once('close', done);
      gz.write(piece, () => done());
    });
  }
}
