import tls from 'node:tls';

// A minimal HTTP/2 client that writes frames as given (RFC 9113), for tests and benchmarks
// that must send what a well-behaved client never would: HEADERS followed at once by
// RST_STREAM, thousands of times. It answers SETTINGS and PING as the protocol requires,
// and records what the server says (GOAWAY, RST_STREAM, HEADERS, DATA).

const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
const FRAME = { DATA: 0x0, HEADERS: 0x1, RST_STREAM: 0x3, SETTINGS: 0x4, PING: 0x6, GOAWAY: 0x7, WINDOW_UPDATE: 0x8 } as const;
export const H2_ERROR = { NO_ERROR: 0, PROTOCOL_ERROR: 1, INTERNAL_ERROR: 2, REFUSED_STREAM: 7, CANCEL: 8, ENHANCE_YOUR_CALM: 11 } as const;
const END_STREAM = 0x1;
const END_HEADERS = 0x4;
const ACK = 0x1;

function frame(type: number, flags: number, streamId: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(9);
  head.writeUIntBE(payload.length, 0, 3);
  head.writeUInt8(type, 3);
  head.writeUInt8(flags, 4);
  head.writeUInt32BE(streamId & 0x7fffffff, 5);
  return Buffer.concat([head, payload]);
}

/** An HPACK integer with an N-bit prefix (RFC 7541 §5.1). */
function hpackInt(value: number, prefixBits: number, firstByte = 0): number[] {
  const max = (1 << prefixBits) - 1;
  if (value < max) return [firstByte | value];
  const out = [firstByte | max];
  let rest = value - max;
  while (rest >= 128) {
    out.push((rest % 128) + 128);
    rest = Math.floor(rest / 128);
  }
  out.push(rest);
  return out;
}

/** Header fields as "literal without indexing, new name", no Huffman: any server decodes them, nothing is remembered. */
function hpack(headers: Array<[string, string]>): Buffer {
  const bytes: number[] = [];
  for (const [name, value] of headers) {
    const n = Buffer.from(name, 'latin1');
    const v = Buffer.from(value, 'latin1');
    bytes.push(0x00, ...hpackInt(n.length, 7), ...n, ...hpackInt(v.length, 7), ...v);
  }
  return Buffer.from(bytes);
}

export interface GoAway {
  lastStreamId: number;
  errorCode: number;
}

export interface RawH2Options {
  host: string;
  port: number;
  /** The client's own address (loopback is all of 127.0.0.0/8). */
  localAddress?: string;
  ca?: string;
  servername?: string;
  /** SETTINGS sent after the preface, as [identifier, value] (e.g. [0x4, 0]: INITIAL_WINDOW_SIZE 0). */
  settings?: Array<[number, number]>;
}

export class RawH2 {
  /** The server's GOAWAY, once one arrived. */
  goaway: GoAway | null = null;
  /** Streams the server reset, with its error code. */
  readonly resets = new Map<number, number>();
  /** Streams whose response HEADERS arrived. */
  readonly answered = new Set<number>();
  /** DATA bytes received, per stream. */
  readonly dataBytes = new Map<number, number>();
  /** Resolves when the connection is closed (by either side). */
  readonly closed: Promise<void>;
  private nextId = 1;
  private pending: Buffer = Buffer.alloc(0);
  private readonly onFrame: Array<() => void> = [];

  private constructor(readonly socket: tls.TLSSocket) {
    this.closed = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('error', () => undefined);
    socket.on('data', (chunk: Buffer) => this.read(chunk));
  }

  /** A TLS connection with ALPN h2, the preface and SETTINGS sent; rejects when the server closes it before the handshake ends. */
  static connect(opts: RawH2Options): Promise<RawH2> {
    return new Promise((resolve, reject) => {
      const options: tls.ConnectionOptions = Object.assign(
        {
          host: opts.host,
          port: opts.port,
          servername: opts.servername ?? 'localhost',
          ALPNProtocols: ['h2'],
          ...(opts.ca ? { ca: opts.ca } : { rejectUnauthorized: false }),
        },
        opts.localAddress ? { localAddress: opts.localAddress } : {},
      );
      const socket = tls.connect(options);
      const fail = (err: Error): void => {
        socket.destroy();
        reject(err);
      };
      socket.once('error', fail);
      socket.once('close', () => fail(new Error('closed before the TLS handshake ended')));
      socket.once('secureConnect', () => {
        socket.removeListener('error', fail);
        socket.removeAllListeners('close');
        const settings = Buffer.alloc(6 * (opts.settings?.length ?? 0));
        (opts.settings ?? []).forEach(([id, value], i) => {
          settings.writeUInt16BE(id, i * 6);
          settings.writeUInt32BE(value, i * 6 + 2);
        });
        socket.write(Buffer.concat([PREFACE, frame(FRAME.SETTINGS, 0, 0, settings)]));
        resolve(new RawH2(socket));
      });
    });
  }

  /** A new stream id (odd, increasing). */
  newStream(): number {
    const id = this.nextId;
    this.nextId += 2;
    return id;
  }

  /** The frames of a request on `streamId` (END_STREAM set: no body). */
  static request(streamId: number, headers: Array<[string, string]>): Buffer {
    return frame(FRAME.HEADERS, END_HEADERS | END_STREAM, streamId, hpack(headers));
  }

  static rstStream(streamId: number, errorCode: number = H2_ERROR.CANCEL): Buffer {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(errorCode, 0);
    return frame(FRAME.RST_STREAM, 0, streamId, payload);
  }

  static windowUpdate(streamId: number, increment: number): Buffer {
    const payload = Buffer.alloc(4);
    payload.writeUInt32BE(increment, 0);
    return frame(FRAME.WINDOW_UPDATE, 0, streamId, payload);
  }

  /** Writes frames; resolves once the socket can take more (false: the connection is gone). */
  async write(data: Buffer): Promise<boolean> {
    if (this.socket.destroyed) return false;
    if (this.socket.write(data)) return true;
    return new Promise((resolve) => {
      const done = (ok: boolean): void => {
        this.socket.removeListener('drain', onDrain);
        this.socket.removeListener('close', onClose);
        resolve(ok);
      };
      const onDrain = (): void => done(true);
      const onClose = (): void => done(false);
      this.socket.once('drain', onDrain);
      this.socket.once('close', onClose);
    });
  }

  /** Resolves when `test` holds after some frame (or at once); false when the connection closes first. */
  until(test: () => boolean): Promise<boolean> {
    if (test()) return Promise.resolve(true);
    return new Promise((resolve) => {
      const check = (): void => {
        if (test()) {
          this.onFrame.splice(this.onFrame.indexOf(check), 1);
          resolve(true);
        }
      };
      this.onFrame.push(check);
      void this.closed.then(() => resolve(test()));
    });
  }

  destroy(): void {
    this.socket.destroy();
  }

  private read(chunk: Buffer): void {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    while (this.pending.length >= 9) {
      const length = this.pending.readUIntBE(0, 3);
      if (this.pending.length < 9 + length) break;
      const type = this.pending.readUInt8(3);
      const flags = this.pending.readUInt8(4);
      const streamId = this.pending.readUInt32BE(5) & 0x7fffffff;
      const payload = this.pending.subarray(9, 9 + length);
      this.pending = this.pending.subarray(9 + length);
      this.handle(type, flags, streamId, payload);
      for (const check of [...this.onFrame]) check();
    }
  }

  private handle(type: number, flags: number, streamId: number, payload: Buffer): void {
    if (type === FRAME.SETTINGS && (flags & ACK) === 0) this.socket.write(frame(FRAME.SETTINGS, ACK, 0));
    else if (type === FRAME.PING && (flags & ACK) === 0) this.socket.write(frame(FRAME.PING, ACK, 0, payload));
    else if (type === FRAME.GOAWAY) this.goaway = { lastStreamId: payload.readUInt32BE(0) & 0x7fffffff, errorCode: payload.readUInt32BE(4) };
    else if (type === FRAME.RST_STREAM) this.resets.set(streamId, payload.readUInt32BE(0));
    else if (type === FRAME.HEADERS) this.answered.add(streamId);
    else if (type === FRAME.DATA) this.dataBytes.set(streamId, (this.dataBytes.get(streamId) ?? 0) + payload.length);
  }
}
