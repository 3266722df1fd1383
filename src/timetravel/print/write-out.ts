/**
 * Writes the pieces gathered into writes of about 1 MiB (one write per piece costs a system call
 * each), as the stream drains. Each piece is copied before the next is asked for, so a producer may
 * reuse its buffer; the chunks are reused once written (fresh ones each megabyte cost the kernel
 * more, their pages, than the copy). live: each piece is written as soon as it comes.
 */
export async function writeAll(out: NodeJS.WritableStream, pieces: AsyncIterable<string | Buffer> | Iterable<string | Buffer>, live = false): Promise<void> {
  const CHUNK = 1 << 20;
  const free: Buffer[] = [];
  let chunk: Buffer = Buffer.allocUnsafe(CHUNK);
  let size = 0;
  const flush = async () => {
    const full = chunk;
    const written = out.write(full.subarray(0, size), () => free.push(full));
    chunk = free.pop() ?? Buffer.allocUnsafe(CHUNK);
    size = 0;
    if (!written) await new Promise((r) => out.once('drain', r));
  };
  for await (const p of pieces) {
    const b = typeof p === 'string' ? Buffer.from(p) : p;
    for (let at = 0; at < b.length;) {
      if (size === CHUNK) await flush();
      const n = b.copy(chunk, size, at);
      size += n;
      at += n;
    }
    // Pieces that come as things happen (--follow) are seen as they come.
    if (live) await flush();
  }
  if (size > 0) await flush();
}
