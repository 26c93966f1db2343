#!/usr/bin/env node
// Writes docs/config.schema.json from the one zod schema the Worker and the launcher validate with.
// `--check` fails if the committed file is stale (run by the tests).
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import * as z from "zod/mini";
import { ConfigSchema } from "../src/config/config-schema.ts";

const schema = {
  ...z.toJSONSchema(ConfigSchema),
  title: "SWITCHYARD_CONFIG",
  description: "Switchyard's configuration: models and their ordered targets, limits, timeouts, tool-call policy. See docs/configuration.md.",
};
const text = JSON.stringify(schema, null, 2) + "\n";
const path = new URL("../docs/config.schema.json", import.meta.url);
const { values: flags } = parseArgs({ options: { check: { type: "boolean" } } });
if (flags.check) {
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {}
  if (current !== text) {
    console.error("docs/config.schema.json is stale: run `npm run config:schema` and commit it.");
    process.exit(1);
  }
} else {
  writeFileSync(path, text);
  console.log("wrote docs/config.schema.json");
}
