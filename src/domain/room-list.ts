import { ROOM_NUMBER_MAX } from './guest-schema.js';
import { normalizeIdentifier, normalizeRoomNumber } from './guest.js';

// The hotel's room list (README.md: Rooms; docs/dashboard.md): a room number in the one
// form the roster uses (docs/identifiers.md), its floor, its type, and why it is out of
// order. No personal data: the reason is about the room ("water damage"), not a guest.

/** A hotel keeps at most this many rooms on its list. */
export const MAX_ROOMS_PER_HOTEL = 5_000;
/** An imported CSV holds at most this many bytes (UTF-8): 5,000 rooms of usual lines fit in a tenth of it. */
export const MAX_ROOM_CSV_BYTES = 512 * 1024;
const FLOOR_MAX = 10;
const ROOM_TYPE_MAX = 60;
const OUT_OF_ORDER_REASON_MAX = 200;
/** An import or an edit stops looking after this many problems; the answer lists the first 20. */
const MAX_FOUND_LINE_ERRORS = 50;

export interface RoomFields {
  roomNumber: string;
  floor: string | null;
  type: string | null;
  outOfOrderReason: string | null;
}

/** The CSV's columns, in the order of the documented header; only `room` is required. */
const CSV_COLUMNS = ['room', 'floor', 'type', 'out_of_order_reason'] as const;
type CsvColumn = (typeof CSV_COLUMNS)[number];

/** Control and format characters, refused in a room number as everywhere (docs/identifiers.md). */
const REFUSED_IN_IDENTIFIERS = /[\u0000-\u001f\u007f-\u009f\p{Cf}]/u;
/** Control characters, refused in the other texts (a line break in a floor is a mistake). */
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/u;

/** "305" → "3", "1204" → "12": the floor of a room numbered floor-then-room (3 or 4 digits), else null. */
function floorFromRoomNumber(room: string): string | null {
  return /^\d{3,4}$/.test(room) ? String(Number(room.slice(0, -2))) : null;
}

export interface RoomProblem {
  field: 'roomNumber' | 'floor' | 'type' | 'outOfOrderReason';
  code: 'REQUIRED' | 'TOO_LONG' | 'INVALID_FORMAT';
  message: string;
}

const LABEL: Record<RoomProblem['field'], string> = {
  roomNumber: 'the room number',
  floor: 'the floor',
  type: 'the type',
  outOfOrderReason: 'the out-of-order reason',
};

/** A text field: trimmed (NFKC for the room number), blank → null; its problems named. */
function text(field: RoomProblem['field'], raw: string | null | undefined, max: number, problems: RoomProblem[]): string | null {
  if (raw === null || raw === undefined) return null;
  const value = field === 'roomNumber' ? normalizeRoomNumber(raw) : normalizeIdentifier(raw).trim();
  if (value === '') return null;
  const refused = field === 'roomNumber' ? REFUSED_IN_IDENTIFIERS : CONTROL;
  if (refused.test(value)) {
    problems.push({
      field,
      code: 'INVALID_FORMAT',
      message: `${capital(LABEL[field])} contains an invisible or control character (such as a zero-width space or a line break): type it again without it.`,
    });
    return null;
  }
  if ([...value].length > max) {
    problems.push({ field, code: 'TOO_LONG', message: `${capital(LABEL[field])} is longer than ${max} characters: shorten it.` });
    return null;
  }
  return value;
}

const capital = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);

/**
 * One room's fields in their stored form, or the problems found. A blank floor of a room
 * numbered floor-then-room (3 or 4 digits) is taken from its number ("305" is on floor 3).
 */
export function roomFields(input: { roomNumber?: string | null; floor?: string | null; type?: string | null; outOfOrderReason?: string | null }): {
  room: RoomFields | null;
  problems: RoomProblem[];
} {
  const problems: RoomProblem[] = [];
  const roomNumber = text('roomNumber', input.roomNumber, ROOM_NUMBER_MAX, problems);
  if (roomNumber === null && !problems.some((p) => p.field === 'roomNumber')) {
    problems.push({ field: 'roomNumber', code: 'REQUIRED', message: 'The room number is empty: write the room number (e.g. 305).' });
  }
  const floor = text('floor', input.floor, FLOOR_MAX, problems);
  const type = text('type', input.type, ROOM_TYPE_MAX, problems);
  const outOfOrderReason = text('outOfOrderReason', input.outOfOrderReason, OUT_OF_ORDER_REASON_MAX, problems);
  if (problems.length > 0 || roomNumber === null) return { room: null, problems };
  return { room: { roomNumber, floor: floor ?? floorFromRoomNumber(roomNumber), type, outOfOrderReason }, problems };
}

interface CsvLineError {
  /** The line of the CSV (1 is the header) where the record starts. */
  line: number;
  /** The column concerned, by its header name, or null for the whole line. */
  column: string | null;
  code: 'REQUIRED' | 'TOO_LONG' | 'INVALID_FORMAT' | 'DUPLICATE' | 'UNKNOWN_FIELD' | 'TOO_MANY';
  message: string;
}

const COLUMN_OF: Record<RoomProblem['field'], CsvColumn> = { roomNumber: 'room', floor: 'floor', type: 'type', outOfOrderReason: 'out_of_order_reason' };

type CsvRecord = { line: number; fields: string[] };

/**
 * The records of a CSV (RFC 4180: fields separated by `sep`, double quotes around a field
 * that holds the separator, a quote or a line break, `""` for a quote inside it), each
 * with the line it starts on. Blank lines are skipped. One pass over the text.
 */
function csvRecords(text: string, sep: string): { records: CsvRecord[]; unclosedQuoteAt: number | null } {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let quoted = false;
  let line = 1;
  let start = 1;
  let quoteLine = 0;
  let any = false; // the current record has a character or a separator
  const end = () => {
    fields.push(field);
    if (any) records.push({ line: start, fields });
    fields = [];
    field = '';
    any = false;
  };
  for (let i = 0; i < text.length; i++) {
    const c = text.charAt(i);
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else quoted = false;
      } else {
        if (c === '\n') line++;
        field += c;
      }
      continue;
    }
    if (c === '"' && field.trim() === '') {
      field = '';
      quoted = true;
      quoteLine = line;
      any = true;
    } else if (c === sep) {
      fields.push(field);
      field = '';
      any = true;
    } else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      end();
      line++;
      start = line;
    } else {
      field += c;
      if (c.trim() !== '') any = true;
    }
  }
  if (quoted) return { records, unclosedQuoteAt: quoteLine };
  end();
  return { records, unclosedQuoteAt: null };
}

export type CsvOutcome = { ok: true; rooms: RoomFields[] } | { ok: false; errors: CsvLineError[]; stopped: boolean };

/**
 * A room list from its CSV (README.md: Rooms): a header naming the columns (`room`
 * required; `floor`, `type`, `out_of_order_reason` optional, in any order, any case),
 * separated by commas or, when the header has a semicolon and no comma, semicolons (as
 * spreadsheets save in many languages); then one room a line. Every problem names its
 * line and the fix; the check stops after MAX_FOUND_LINE_ERRORS problems. The caller
 * bounds the text (MAX_ROOM_CSV_BYTES), so the work is bounded too.
 */
export function parseRoomCsv(raw: string): CsvOutcome {
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  const firstLine = text.split(/\r?\n/, 1)[0] ?? '';
  const sep = firstLine.includes(';') && !firstLine.includes(',') ? ';' : ',';
  const { records, unclosedQuoteAt } = csvRecords(text, sep);
  if (unclosedQuoteAt !== null) {
    const message = `Line ${unclosedQuoteAt}: a quoted field is never closed: add the closing double quote (") or remove the opening one.`;
    return { ok: false, errors: [{ line: unclosedQuoteAt, column: null, code: 'INVALID_FORMAT', message }], stopped: false };
  }
  const header = records[0];
  if (!header) {
    const message = `The CSV is empty: start with the header line ${CSV_COLUMNS.join(',')}, then one room a line (e.g. 305,3,Double,).`;
    return { ok: false, errors: [{ line: 1, column: null, code: 'REQUIRED', message }], stopped: false };
  }
  const columns = readHeader(header);
  if (!columns.ok) return { ok: false, errors: columns.errors, stopped: false };
  return readRoomLines(records.slice(1), columns, sep);
}

type CsvHeader = { ok: true; count: number; index: Map<CsvColumn, number> } | { ok: false; errors: CsvLineError[] };

/** Which field of a line holds which column, from the header line; or what is wrong with the header. */
function readHeader(header: CsvRecord): CsvHeader {
  const errors: CsvLineError[] = [];
  const names = header.fields.map((f) => f.trim().toLowerCase());
  const index = new Map<CsvColumn, number>();
  const { line } = header;
  names.forEach((name, i) => {
    if ((CSV_COLUMNS as readonly string[]).includes(name)) {
      if (!index.has(name as CsvColumn)) index.set(name as CsvColumn, i);
      else errors.push({ line, column: name, code: 'DUPLICATE', message: `Line ${line}: the column ${name} appears twice in the header: keep one.` });
    } else if (name !== '' || header.fields.length > 1) {
      errors.push({
        line,
        column: name || null,
        code: 'UNKNOWN_FIELD',
        message: `Line ${line}: the header has a column "${name.slice(0, 40)}" that a room list does not have: the columns are ${CSV_COLUMNS.join(', ')} (only room is required); rename or remove it.`,
      });
    }
  });
  if (!index.has('room')) {
    errors.push({
      line,
      column: 'room',
      code: 'REQUIRED',
      message: `Line ${line}: the header has no column room: the first line must name the columns, e.g. ${CSV_COLUMNS.join(',')}.`,
    });
  }
  return errors.length > 0 ? { ok: false, errors } : { ok: true, count: names.length, index };
}

/** The rooms of the lines after the header, or every problem found (at most MAX_FOUND_LINE_ERRORS). */
function readRoomLines(records: CsvRecord[], { count, index }: { count: number; index: Map<CsvColumn, number> }, sep: string): CsvOutcome {
  const errors: CsvLineError[] = [];
  const stop = () => errors.length >= MAX_FOUND_LINE_ERRORS;
  const rooms: RoomFields[] = [];
  const seen = new Map<string, number>();
  for (const { line, fields } of records) {
    if (stop()) break;
    if (rooms.length >= MAX_ROOMS_PER_HOTEL) {
      errors.push({
        line,
        column: null,
        code: 'TOO_MANY',
        message: `Line ${line}: a room list holds at most ${MAX_ROOMS_PER_HOTEL.toLocaleString('en')} rooms, and this is room ${MAX_ROOMS_PER_HOTEL + 1}: remove the lines that are not rooms of this hotel.`,
      });
      break;
    }
    if (fields.length > count) {
      const message = `Line ${line}: ${fields.length} fields where the header names ${count}: put a field holding "${sep}" in double quotes, or remove the extra fields.`;
      errors.push({ line, column: null, code: 'INVALID_FORMAT', message });
      continue;
    }
    const at = (c: CsvColumn) => {
      const i = index.get(c);
      return i === undefined ? null : (fields[i] ?? null);
    };
    const { room, problems } = roomFields({ roomNumber: at('room'), floor: at('floor'), type: at('type'), outOfOrderReason: at('out_of_order_reason') });
    for (const p of problems) {
      if (stop()) break;
      errors.push({ line, column: COLUMN_OF[p.field], code: p.code, message: `Line ${line}, column ${COLUMN_OF[p.field]}: ${p.message}` });
    }
    if (!room) continue;
    const earlier = seen.get(room.roomNumber);
    if (earlier !== undefined) {
      const message = `Line ${line}: room ${room.roomNumber} is already on line ${earlier}: keep one of the two lines.`;
      errors.push({ line, column: 'room', code: 'DUPLICATE', message });
      continue;
    }
    seen.set(room.roomNumber, line);
    rooms.push(room);
  }
  if (errors.length > 0) return { ok: false, errors, stopped: stop() };
  return { ok: true, rooms };
}
