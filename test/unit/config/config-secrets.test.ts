import { describe, expect, it } from "vitest";
import * as z from "zod/mini";
import { parseConfig } from "../../../src/config/config.ts";
import { configSecrets, schemaKinds, WALKED_KINDS } from "../../../src/config/config-secrets.ts";
import { ConfigSchema, secretFields } from "../../../src/config/config-schema.ts";

const parsed = (config: unknown) => {
  const r = parseConfig({ SWITCHYARD_CONFIG: JSON.stringify(config) });
  if (!r.ok) throw new Error(JSON.stringify(r.problems));
  return r.config;
};

describe("configSecrets: every secret the configuration holds, found by its schema's marks (issue 40, finding 9)", () => {
  it("routers' apiKeySecret, openai targets' headers values, the collector's key and headers, besides targets' apiKeySecret", () => {
    const config = parsed({
      models: {
        a: { targets: [{ kind: "llama", url: "https://gpu.example.com", apiKeySecret: "GPU_KEY" }] },
        b: { targets: [{ kind: "openai", url: "https://gw.example.com", apiKeySecret: "GW_KEY", headers: { "x-portkey-api-key": "pk-live-0123456789", "x-portkey-provider": "openai" } }] },
      },
      routers: [{ url: "https://router.example.com", apiKeySecret: "ROUTER_KEY" }, { url: "https://router2.example.com" }],
      observability: { otlp: { endpoint: "https://otel.example.com", apiKeySecret: "OTLP_KEY", headers: { "x-honeycomb-team": "hc-team-key-0123" } } },
    });
    expect(config.secrets.names.sort()).toEqual(["GPU_KEY", "GW_KEY", "OTLP_KEY", "ROUTER_KEY"]);
    expect(config.secrets.values.sort()).toEqual(["hc-team-key-0123", "openai", "pk-live-0123456789"]);
  });

  it("a configuration with no secrets has none; zero config too", () => {
    expect(parsed({ models: { a: { targets: [{ kind: "browser", model: "m" }] } } }).secrets).toEqual({ names: [], values: [] });
    const zero = parseConfig({ LLAMA_URL: "https://gpu.example.com" });
    expect(zero.ok && zero.config.secrets).toEqual({ names: [], values: [] });
  });

  it("a field is read by the union option the value is, not by another option's mark", () => {
    const Marked = z.string().register(secretFields, { secret: "env-name" });
    const schema = z.discriminatedUnion("kind", [z.object({ kind: z.literal("a"), name: Marked }), z.object({ kind: z.literal("b"), name: z.string() })]);
    expect(configSecrets(schema, { kind: "a", name: "A_KEY" }).names).toEqual(["A_KEY"]);
    expect(configSecrets(schema, { kind: "b", name: "just-a-name" }).names).toEqual([]);
  });

  it("the walk knows every kind of schema the configuration is made of (a new kind would hide its secrets)", () => {
    const unknown = [...schemaKinds(ConfigSchema)].filter((k) => !WALKED_KINDS.has(k));
    expect(unknown).toEqual([]);
  });

  it("every field whose name says it carries a credential is marked secret in the schema", () => {
    const CREDENTIAL = /secret|password|passwd|api_?key|headers|authorization|cookie|credential|token$/i;
    const unmarked: string[] = [];
    const visit = (schema: z.ZodMiniType, path: string, seen: Set<unknown>) => {
      if (seen.has(schema)) return;
      seen.add(schema);
      const def = (schema as unknown as { _zod: { def: Record<string, unknown> & { type: string } } })._zod.def;
      if (def.type === "object") {
        for (const [key, field] of Object.entries(def.shape as Record<string, z.ZodMiniType>)) {
          let inner = field;
          while ((inner as unknown as { _zod: { def: { type: string } } })._zod.def.type === "optional") inner = (inner as unknown as { _zod: { def: { innerType: z.ZodMiniType } } })._zod.def.innerType;
          if (CREDENTIAL.test(key) && !secretFields.has(inner)) unmarked.push(`${path}.${key}`);
          visit(field, `${path}.${key}`, seen);
        }
        return;
      }
      for (const child of [def.innerType, def.element, def.valueType, ...((def.options as unknown[]) ?? [])]) if (child) visit(child as z.ZodMiniType, path, seen);
    };
    visit(ConfigSchema, "config", new Set());
    expect(unmarked).toEqual([]);
  });
});
