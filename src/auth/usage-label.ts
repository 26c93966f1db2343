// A usage row's model or backend as stored: bounded, so a row key can always be written.
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";

/** The longest model or backend kept whole in a usage row's key (model names are bounded to 256 on the way in). */
export const USAGE_LABEL_MAX = 256;

/**
 * `label` when it is at most USAGE_LABEL_MAX characters; otherwise its first 200 characters, "…#" and
 * 16 hex digits of its SHA-256, so a longer name still gets a row of its own, of a bounded size.
 */
export function usageLabel(label: string): string {
  if (label.length <= USAGE_LABEL_MAX) return label;
  return `${label.slice(0, 200)}…#${bytesToHex(sha256(utf8ToBytes(label))).slice(0, 16)}`;
}
