/**
 * Streaming reader of a settlement CSV, built on csv-parse (a maintained RFC 4180 parser:
 * quoted fields, embedded line breaks, BOM). The caller writes the raw chunks as they
 * arrive and iterates the rows in parallel; back-pressure flows from the row consumer to
 * the writer, so memory holds a few chunks and one batch of rows whatever the file's size.
 *
 * Line numbers are counted here from each record's raw text (csv-parse's own counter
 * counts a quoted CRLF twice): a row is reported at the line where it starts, the header
 * being line 1. A row that does not parse or check is reported and the rest go on; a
 * fault the parser cannot recover from (an unclosed quote, a record over the size cap)
 * ends the parsing with one report for the rest of the file. Either way the caller keeps
 * storing the bytes: a broken file is still kept.
 */
import { parse, type Parser } from 'csv-parse';
import { readHeader, readRow, type ColumnIndex, type SettlementLine } from './settlement-row.js';

export type ReaderEvent =
  | { readonly kind: 'line'; readonly lineNumber: number; readonly line: SettlementLine }
  | { readonly kind: 'bad'; readonly lineNumber: number; readonly error: string };

export interface SettlementCsvReaderOptions {
  /** The organization whose file this is: a row naming another is bad. */
  readonly organizationId: string;
  /** Largest record accepted (a runaway quote would otherwise swallow the file). Default 64 KiB. */
  readonly maxRecordBytes?: number;
}

interface ParsedRecord {
  readonly record: string[];
  readonly raw: string;
}

const TRAILING_BREAK = /(\r\n|\r|\n)$/;
const BREAKS = /\r\n|\r|\n/g;

/** Rows held between the parser and the consumer before `write` waits. */
const HIGH_WATER = 1024;
const LOW_WATER = 256;

export class SettlementCsvReader {
  private readonly parser: Parser;
  private readonly queue: ReaderEvent[] = [];
  private finished = false;
  private aborted = false;
  private nextLine = 1;
  private header: ColumnIndex | string | null = null;
  private headerLine = 1;
  private goodRows = 0;
  private badRows = 0;
  private wakeConsumer: (() => void) | null = null;
  private wakeProducer: (() => void) | null = null;

  constructor(private readonly options: SettlementCsvReaderOptions) {
    this.parser = parse({
      bom: true,
      raw: true,
      relax_quotes: true,
      relax_column_count: true,
      record_delimiter: ['\r\n', '\n'],
      max_record_size: options.maxRecordBytes ?? 64 * 1024,
    });
    // Flowing mode: csv-parse turns each written chunk into records synchronously, and
    // they are queued here at once, so a later parser error can never drop rows already
    // parsed (a stream's async iterator would). `write` waits while the queue is long.
    this.parser.on('data', (item: ParsedRecord) => {
      const event = this.read(item);
      if (event !== null) this.push(event);
    });
    this.parser.on('error', (error: unknown) => {
      if (!this.aborted) {
        this.badRows += 1;
        this.push({
          kind: 'bad',
          lineNumber: this.nextLine,
          error: `${csvErrorText(error)}; the rest of the file could not be read`,
        });
      }
      this.finish();
    });
    this.parser.on('end', () => this.finish());
  }

  get rows(): number {
    return this.goodRows;
  }

  get badRowCount(): number {
    return this.badRows;
  }

  /** Feeds raw bytes; resolves when the consumer has caught up. Never rejects. */
  async write(chunk: Buffer): Promise<void> {
    if (this.finished || this.parser.destroyed) return;
    this.parser.write(chunk);
    while (this.queue.length > HIGH_WATER && !this.aborted) {
      await new Promise<void>((resolve) => {
        this.wakeProducer = resolve;
      });
    }
  }

  /** No more bytes. */
  end(): void {
    if (!this.finished && !this.parser.destroyed) this.parser.end();
  }

  /** Stops parsing (the download failed): the row iterator ends. */
  abort(): void {
    this.aborted = true;
    this.queue.length = 0;
    this.parser.destroy();
    this.finish();
    this.wakeProducer?.();
  }

  /** The rows, in file order; ends after `end()` (or the first unrecoverable fault). */
  async *events(): AsyncGenerator<ReaderEvent> {
    for (;;) {
      const event = this.queue.shift();
      if (event !== undefined) {
        if (this.queue.length <= LOW_WATER && this.wakeProducer !== null) {
          const wake = this.wakeProducer;
          this.wakeProducer = null;
          wake();
        }
        yield event;
        continue;
      }
      if (this.finished) return;
      await new Promise<void>((resolve) => {
        this.wakeConsumer = resolve;
      });
    }
  }

  private push(event: ReaderEvent): void {
    this.queue.push(event);
    this.wake();
  }

  private finish(): void {
    this.finished = true;
    this.wake();
  }

  private wake(): void {
    const wake = this.wakeConsumer;
    this.wakeConsumer = null;
    wake?.();
  }

  private read({ record, raw }: ParsedRecord): ReaderEvent | null {
    const lineNumber = this.nextLine;
    const body = raw.replace(TRAILING_BREAK, '');
    this.nextLine += 1 + (body.match(BREAKS)?.length ?? 0);
    if (record.length === 1 && record[0]?.trim() === '') return null; // a blank line
    if (this.header === null) {
      this.headerLine = lineNumber;
      this.header = readHeader(record);
      if (typeof this.header === 'string') {
        this.badRows += 1;
        return { kind: 'bad', lineNumber, error: this.header };
      }
      return null;
    }
    if (typeof this.header === 'string') {
      this.badRows += 1;
      return {
        kind: 'bad',
        lineNumber,
        error: `not read: the header row (line ${this.headerLine}) is unusable`,
      };
    }
    const result = readRow(record, this.header, this.options.organizationId);
    if (!result.ok) {
      this.badRows += 1;
      return { kind: 'bad', lineNumber, error: result.error };
    }
    this.goodRows += 1;
    return { kind: 'line', lineNumber, line: result.line };
  }
}

function csvErrorText(error: unknown): string {
  const code: unknown = error instanceof Error ? Reflect.get(error, 'code') : undefined;
  switch (code) {
    case 'CSV_QUOTE_NOT_CLOSED':
      return 'a quoted field is never closed';
    case 'CSV_MAX_RECORD_SIZE':
      return 'a record is larger than the size limit';
    default:
      return error instanceof Error ? error.message.split('\n')[0]! : 'the CSV parser failed';
  }
}
