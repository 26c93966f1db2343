// A bench's block in docs/benchmarks.md: only the text between its markers is the run's; the section's
// heading and what is around the block are written by hand. Without the markers, the section goes at
// the end with its heading.

/**
 * `doc` with the block from `startMarker` to `endMarker` replaced by `block` (which carries both
 * markers), or the section appended under `heading` when the doc has neither marker.
 * @param {string} doc @param {string} startMarker @param {string} endMarker @param {string} block @param {string} heading
 */
export function replaceMarkedBlock(doc, startMarker, endMarker, block, heading) {
  const start = doc.indexOf(startMarker);
  const end = doc.indexOf(endMarker);
  if ((start >= 0) !== (end >= 0) || end < start) throw new Error(`the doc has only one of the markers ${startMarker} … ${endMarker}`);
  return start >= 0 ? `${doc.slice(0, start)}${block}${doc.slice(end + endMarker.length)}` : `${doc.trimEnd()}\n\n${heading}\n\n${block}\n`;
}
