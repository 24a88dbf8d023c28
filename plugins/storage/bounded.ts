/**
 * @module
 * The request's messages as the record view keeps them: inline data (a base64 image in a data: URL, input audio, a
 * file's data) longer than INLINE_KEPT stands in as its head and its size, so that a request with a 4 MB screenshot
 * stores a few hundred bytes, not the screenshot: the record is serialized, logged ahead and written once per request,
 * and nothing reads the pixels back (the console shows an image as its type and size). The messages sent upstream are
 * not touched; what is replaced is copied, the rest shared.
 */

/** Inline data up to this many characters is kept as it came (an icon, a pixel); longer, its stand-in. */
export const INLINE_KEPT = 1024;

/** Where a stand-in says how many bytes the data it replaces held (decoded, for base64). */
export const OMITTED_BYTES = 'omitted_bytes';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null;

/** `messages` with long inline data replaced; the same array when there is none (the usual case). */
export function boundedMessages(messages: readonly unknown[]): readonly unknown[] {
  let out: unknown[] | undefined;
  for (let i = 0; i < messages.length; i++) {
    const m = messages[i];
    if (!isObj(m) || !Array.isArray(m.content)) continue;
    const content = m.content as unknown[];
    let parts: unknown[] | undefined;
    for (let j = 0; j < content.length; j++) {
      const b = boundedPart(content[j]);
      if (b === content[j]) continue;
      parts ??= content.slice();
      parts[j] = b;
    }
    if (!parts) continue;
    out ??= messages.slice();
    out[i] = { ...m, content: parts };
  }
  return out ?? messages;
}

/** A content part with its inline data bounded, or the part itself. */
function boundedPart(p: unknown): unknown {
  if (!isObj(p)) return p;
  // Chat's image_url ({url}) and audio ({data}); a file part's file_data.
  const [field, key] =
    p.type === 'image_url'
      ? ['image_url', 'url']
      : p.type === 'input_audio'
        ? ['input_audio', 'data']
        : ['file', 'file_data'];
  const inner = p[field];
  if (!isObj(inner)) return p;
  const data = inner[key];
  if (typeof data !== 'string' || data.length <= INLINE_KEPT) return p;
  const { head, bytes } = standIn(data);
  return { ...p, [field]: { ...inner, [key]: head, [OMITTED_BYTES]: bytes } };
}

/** A data: URL keeps its media type (`data:image/png;base64,`); bare base64 keeps nothing. Bytes decoded. */
function standIn(data: string): { head: string; bytes: number } {
  const m = data.startsWith('data:') ? /^data:[^,]{0,200},/.exec(data.slice(0, 256)) : null;
  const head = m ? m[0] : '';
  const payload = data.length - head.length;
  const base64 = m ? head.endsWith(';base64,') : true;
  if (!base64) return { head, bytes: payload };
  const pad = data.endsWith('==') ? 2 : data.endsWith('=') ? 1 : 0;
  return { head, bytes: Math.floor((payload * 3) / 4) - pad };
}
