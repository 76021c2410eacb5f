// The one thing hydrate needs to know of a tar: the name of its first member, to tell an
// archive of a directory under its own name from an archive of its contents.

const BLOCK = 512;
/** Headers that describe the next member (PAX, GNU long names) rather than being one. */
const META = new Set(['x', 'g', 'L', 'K']);

function field(block: Uint8Array, start: number, length: number): string {
  const raw = block.subarray(start, start + length);
  const end = raw.indexOf(0);
  return new TextDecoder().decode(end < 0 ? raw : raw.subarray(0, end));
}

/** The first member's name without a leading `./`; undefined for an empty or unreadable archive. */
export function archiveTopName(tar: Uint8Array): string | undefined {
  for (let at = 0; at + BLOCK <= tar.length; ) {
    const header = tar.subarray(at, at + BLOCK);
    const name = field(header, 0, 100);
    if (!name) return undefined;
    const type = String.fromCharCode(header[156] ?? 0);
    if (!META.has(type)) {
      const prefix = field(header, 345, 155);
      const full = prefix ? `${prefix}/${name}` : name;
      return full.replace(/^(\.\/)+/, '').replace(/^\.$/, '');
    }
    const size = parseInt(field(header, 124, 12).trim() || '0', 8);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return undefined;
}
