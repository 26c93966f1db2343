// MiniCPM 5: <function name="NAME"><param name="KEY">VALUE or <![CDATA[VALUE]]></param></function>,
// read when a `<function …>` region (qwen3-coder.ts) holds <param> elements. A CDATA value is kept
// verbatim and may hold `</param>` itself.

import { toCalls } from "../parse/tagged-calls.ts";
import type { RawCall, TextEntry } from "../scoring/raw-call.ts";
import { ForwardSearch } from "../text/forward-search.ts";
import { OpenTagFinder, readNamedTag, type TagPattern } from "../text/open-tags.ts";

const MINICPM_PARAMETER: TagPattern = { prefix: "<param", read: (t, at) => readNamedTag(t, at, "name", "close") };
const CDATA_OPEN = "<![CDATA[";

/** MiniCPM 5 parameters of a `<function name="NAME">` region: `<param name="KEY">`, a CDATA value verbatim. */
export function parseMiniCpmParameters(name: string, body: string, closed: boolean): RawCall | null {
  const entries: TextEntry[] = [];
  let cut = false;
  const tags = new OpenTagFinder(body, MINICPM_PARAMETER);
  // Both closing searches only move forward: each value starts after the last one ended.
  const cdataEnds = new ForwardSearch(body, "]]>");
  const paramCloses = new ForwardSearch(body, "</param>");
  for (let m = tags.next(0); m; ) {
    let start = m.end;
    let end: number;
    let close: number;
    if (body.startsWith(CDATA_OPEN, start)) {
      // The value may hold `</param>` itself: it ends at `]]>`.
      start += CDATA_OPEN.length;
      const cdataEnd = cdataEnds.next(start);
      end = cdataEnd < 0 ? body.length : cdataEnd;
      close = cdataEnd < 0 ? -1 : paramCloses.next(cdataEnd);
    } else {
      close = paramCloses.next(start);
      end = close < 0 ? body.length : close;
    }
    entries.push({ key: m.name.trim(), raw: body.slice(start, end) });
    cut = close < 0;
    if (close < 0) break;
    m = tags.next(close + "</param>".length);
  }
  if (entries.length === 0 && body.trim() !== "") return null;
  return toCalls([{ name, closed, entries, cut }], closed)[0]!;
}
