// A serve key's `serves` list as the admin API receives it (key ids or names) turned into key ids.
import { ProxyError } from "../errors/proxy-error.ts";
import type { KeyRecord } from "./key-record.ts";

/**
 * Pure: a `serve` key's `serves` list as the admin wrote it — key ids or key names — turned into the
 * key ids it stores. Ids are what stays true: a name can be given to a new key after the old one is
 * revoked, an id never. An entry must name exactly one active key; otherwise a 400 naming it.
 */
export function resolveServes(entries: readonly string[], keys: readonly KeyRecord[]): string[] {
  const active = keys.filter((k) => k.revokedAt === null);
  const ids: string[] = [];
  for (const entry of entries) {
    const byId = active.find((k) => k.id === entry);
    const byName = byId ? [byId] : active.filter((k) => k.name === entry);
    if (byName.length !== 1) {
      throw new ProxyError({
        status: 400,
        code: "invalid_value",
        param: "serves",
        message:
          byName.length === 0
            ? `serves: no active key has the id or name "${entry.slice(0, 100)}" (GET /v1/admin/keys lists them).`
            : `serves: the name "${entry.slice(0, 100)}" belongs to ${byName.length} active keys (${byName.map((k) => k.id).join(", ")}); give the id instead.`,
      });
    }
    if (!ids.includes(byName[0]!.id)) ids.push(byName[0]!.id);
  }
  return ids;
}
