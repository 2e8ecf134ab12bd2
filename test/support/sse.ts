/** One server-sent event: its type (`message` when none is named) and its data lines joined. */
export interface SseMessage {
  event: string;
  data: string;
}

/**
 * Reads server-sent events from a stream's text as it arrives, the way EventSource does:
 * blocks end at a blank line, comment lines (`:`) are skipped, several `data:` lines are
 * joined with newlines, and a block without data is not an event. Shared by the tests,
 * the drills and the benchmarks that read the dashboard's event stream.
 */
export class SseParser {
  private buffer = '';

  /** Feeds a chunk; returns the events it completed. */
  push(chunk: string): SseMessage[] {
    this.buffer += chunk.replace(/\r\n?/g, '\n');
    const out: SseMessage[] = [];
    let cut: number;
    while ((cut = this.buffer.indexOf('\n\n')) >= 0) {
      const block = this.buffer.slice(0, cut);
      this.buffer = this.buffer.slice(cut + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
      }
      if (data.length > 0) out.push({ event, data: data.join('\n') });
    }
    return out;
  }
}
