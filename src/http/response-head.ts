/**
 * A response head for one `writeHead` call, as a flat list (name, value, name, value...), from layers of headers: a
 * later layer's value replaces an earlier one's of the same name in any case, in the place the name first came, as
 * `setHeader` one by one would. Node takes its fast path for a flat list when nothing was set on the response before;
 * it checks each header once as it writes it, where `setHeader` also lower-cases and copies each into a map.
 */
export function headList(...layers: ReadonlyArray<Readonly<Record<string, string>>>): string[] {
  const head: string[] = [];
  // Lower-cased names in the order of `head` (a handful: a scan is cheaper than a map).
  const lower: string[] = [];
  for (const layer of layers)
    for (const name in layer) {
      const l = name.toLowerCase();
      const i = lower.indexOf(l);
      if (i < 0) {
        lower.push(l);
        head.push(name, layer[name]);
      } else head[2 * i + 1] = layer[name];
    }
  return head;
}
