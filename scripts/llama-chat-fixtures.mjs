#!/usr/bin/env node
// Regenerates test/fixtures/llama-chat/ from llama.cpp's own chat-parser tests (tests/test-chat.cpp in the
// source bundled with node-llama-cpp): every case of its PEG-parser suite, as llama.cpp itself evaluates it
// (raw model output → expected content, reasoning and calls, with the tools, the template, the format name
// and the generation prompt the template ends with).
//
// How: the test file is patched so that each `peg_tester::test(...).run()` also writes one JSON line (the
// case after all its C++ expressions are evaluated, so no C++ is parsed here), test-chat is built with cmake
// and run. The build is cached outside the repository, keyed by version (≈15 min on 2 cores, once).
//
//   node scripts/llama-chat-fixtures.mjs            build if needed, run, rewrite the fixtures
//   LLAMA_BUILD_JOBS=4 node scripts/llama-chat-fixtures.mjs
//
// The fixtures are committed; npm test only reads them (test/unit/toolcalls/llama-chat-corpus.test.ts).
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync, rmSync, readdirSync } from "node:fs";
import { join, dirname, basename } from "node:path";
import { fileURLToPath } from "node:url";
import { NODE_LLAMA_CPP_VERSION } from "./llama-cache.mjs";
import { configureLlama, fetchLlamaSource } from "./llama-source.mjs";
import { requireTools } from "./llama-server-build.mjs";
import { homedir } from "node:os";

const here = dirname(fileURLToPath(import.meta.url));
const outDir = join(here, "../test/fixtures/llama-chat");
const log = (/** @type {string} */ msg) => process.stderr.write(`[llama-chat-fixtures] ${msg}\n`);

/**
 * @param {string} cmd
 * @param {string[]} args
 * @param {import("node:child_process").SpawnSyncOptions & { allowFailure?: boolean }} [opts]
 */
function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...opts });
  if (r.status !== 0 && !opts.allowFailure) {
    throw new Error(`${cmd} ${args.join(" ")} failed with ${r.status ?? r.signal}`);
  }
  return r;
}

// ---- the patch -------------------------------------------------------------------------------------------

const DUMP_HELPER = String.raw`
// ---- switchyard fixture export (added by scripts/llama-chat-fixtures.mjs) ----
static json sy_msg_json(const common_chat_msg & m) {
    json calls = json::array();
    for (const auto & c : m.tool_calls) {
        calls.push_back({ { "name", c.name }, { "arguments", c.arguments }, { "id", c.id } });
    }
    return { { "content", m.content }, { "reasoning_content", m.reasoning_content }, { "tool_calls", calls } };
}

static void sy_dump(const std::string & template_path, common_chat_templates * tmpls, const peg_test_case & tc_in,
                    int line, bool passed, const std::string & error) {
    const char * path = getenv("SWITCHYARD_DUMP");
    if (!path) {
        return;
    }
    peg_test_case tc = tc_in;
    if (tc.params.messages.empty()) {
        tc.params.messages = { message_user };
    }
    static const char * choices[] = { "auto", "required", "none" };
    static const char * continuations[] = { "none", "auto", "reasoning", "content" };
    json tools = json::array();
    for (const auto & t : tc.params.tools) {
        tools.push_back({ { "name", t.name }, { "description", t.description }, { "parameters", json::parse(t.parameters) } });
    }
    json messages = json::array();
    for (const auto & m : tc.params.messages) {
        json j = sy_msg_json(m);
        j["role"] = m.role;
        messages.push_back(j);
    }
    json rec = {
        { "template", template_path },
        { "line", line },
        { "input", tc.input },
        { "is_partial", tc.is_partial },
        { "tools", tools },
        { "tool_choice", choices[tc.params.tool_choice] },
        { "parallel_tool_calls", tc.params.parallel_tool_calls },
        { "reasoning_format", common_reasoning_format_name(tc.params.reasoning_format) },
        { "enable_thinking", tc.params.enable_thinking },
        { "add_generation_prompt", tc.params.add_generation_prompt },
        { "continue_final_message", continuations[tc.params.continue_final_message] },
        { "json_schema", tc.params.json_schema },
        { "messages", messages },
        { "expect", sy_msg_json(tc.expect) },
        { "llama_pass", passed },
        { "llama_error", error },
    };
    try {
        auto parser = make_peg_parser(tmpls, tc.params, false);
        rec["format"] = common_chat_format_name(parser.params_.format);
        rec["generation_prompt"] = parser.params_.generation_prompt;
        rec["thinking_start_tag"] = parser.params_.thinking_start_tag;
        rec["thinking_end_tags"] = parser.params_.thinking_end_tags;
        rec["actual"] = sy_msg_json(parser.parse(tc.input, tc.is_partial));
    } catch (const std::exception & e) {
        rec["dump_error"] = e.what();
    }
    std::ofstream out(path, std::ios::app);
    out << rec.dump() << "\n";
}
// ---- end of switchyard fixture export ----
`;

const PATCHES = [
  // Each builder remembers the line of its `tst.test(` call, so a fixture can be traced to its source.
  ["    peg_test_builder test(const std::string & input);", "    peg_test_builder test(const std::string & input, int sy_line = __builtin_LINE());"],
  ["    peg_test_case tc_;\n\n  public:\n", "    peg_test_case tc_;\n\n  public:\n    int sy_line_ = 0;\n"],
  [
    "peg_test_builder peg_tester::test(const std::string & input) {\n    return peg_test_builder(*this, input);\n}",
    "peg_test_builder peg_tester::test(const std::string & input, int sy_line) {\n    auto b = peg_test_builder(*this, input);\n    b.sy_line_ = sy_line;\n    return b;\n}",
  ],
  // Run every case even when one fails (llama.cpp's own result is recorded, not asserted), then dump it.
  [
    "        test_peg_parser(tester_.tmpls_.get(), [this](peg_test_case & t) { t = tc_; }, tester_.detailed_debug_);",
    "        bool sy_passed = true;\n        std::string sy_error;\n        try {\n            test_peg_parser(tester_.tmpls_.get(), [this](peg_test_case & t) { t = tc_; }, tester_.detailed_debug_);\n        } catch (const std::exception & e) {\n            sy_passed = false;\n            sy_error  = e.what();\n            if (!getenv(\"SWITCHYARD_DUMP\")) {\n                throw;\n            }\n        }\n        sy_dump(tester_.template_path(), tester_.tmpls_.get(), tc_, sy_line_, sy_passed, sy_error);",
  ],
  // The helper goes right before the builder, after everything it uses.
  ["// Fluent builder for PEG parser tests\n", `${DUMP_HELPER}\n// Fluent builder for PEG parser tests\n`],
];

/** @param {string} src the llama.cpp checkout */
function patchTestChat(src) {
  const file = join(src, "tests/test-chat.cpp");
  let text = readFileSync(file, "utf8");
  if (text.includes("switchyard fixture export")) {
    return;
  }
  for (const [from, to] of PATCHES) {
    const at = text.indexOf(from);
    if (at < 0 || text.indexOf(from, at + 1) >= 0) {
      throw new Error(`tests/test-chat.cpp changed: anchor not found exactly once:\n${from}`);
    }
    text = text.replace(from, () => to);
  }
  writeFileSync(file, text);
}

// ---- build (cached) --------------------------------------------------------------------------------------

export function cacheRoot() {
  const base = process.env.SWITCHYARD_CACHE ?? join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "switchyard");
  return join(base, `llama-chat-tests-${NODE_LLAMA_CPP_VERSION}`);
}

export function buildTestChat() {
  const root = cacheRoot();
  const src = join(root, "llama.cpp");
  const bin = join(src, "build/bin/test-chat");
  if (existsSync(bin)) {
    log(`cached: ${bin}`);
    return { src, bin };
  }
  requireTools();
  rmSync(root, { recursive: true, force: true });
  mkdirSync(root, { recursive: true });
  const { commit } = fetchLlamaSource(root, log);
  writeFileSync(join(root, "VERSION"), `node-llama-cpp ${NODE_LLAMA_CPP_VERSION}\nllama.cpp ${commit}\n`);
  patchTestChat(src);
  log("configuring with cmake…");
  configureLlama(src, { tests: true });
  const jobs = String(process.env.LLAMA_BUILD_JOBS ?? 2);
  log(`compiling test-chat on ${jobs} jobs (≈15 min on 2 cores, once)…`);
  run("cmake", ["--build", join(src, "build"), "--target", "test-chat", "-j", jobs]);
  return { src, bin };
}

// ---- export ----------------------------------------------------------------------------------------------

/**
 * One case as test-chat dumps it (the fields the export reads; the rest is written as is).
 * @typedef {{ template: string, line: number, tools: Array<{ name: string }>, llama_pass?: boolean, id?: string }} DumpedCase
 */

/** @param {{ src: string, bin: string }} build */
function exportCases({ src, bin }) {
  const dump = join(cacheRoot(), "cases.jsonl");
  rmSync(dump, { force: true });
  log("running test-chat (its PEG-parser suite)…");
  // `--template ""` runs only the template output tests (the PEG-parser cases), with an empty filter.
  const r = run(bin, ["--template", ""], {
    cwd: src,
    env: { ...process.env, SWITCHYARD_DUMP: dump },
    stdio: ["ignore", "ignore", "pipe"],
    allowFailure: true,
  });
  if (!existsSync(dump)) {
    throw new Error(`test-chat wrote no cases (exit ${r.status}): ${String(r.stderr).slice(-2000)}`);
  }
  /** @type {DumpedCase[]} */
  const cases = readFileSync(dump, "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const commit = readFileSync(join(cacheRoot(), "VERSION"), "utf8").match(/llama\.cpp (\w+)/)?.[1];
  if (!commit) throw new Error(`${join(cacheRoot(), "VERSION")} names no llama.cpp commit`);

  // One file per template, so a diff after an update shows which format moved. Tools are shared by name.
  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  // Tools are shared by key: the name, or `name#2`… when test-chat declares two different tools of one name.
  /** @type {Record<string, { name: string }>} */
  const tools = {};
  const keyOf = (/** @type {{ name: string }} */ t) => {
    const text = JSON.stringify(t);
    for (let n = 1; ; n++) {
      const key = n === 1 ? t.name : `${t.name}#${n}`;
      if (!tools[key]) tools[key] = t;
      if (JSON.stringify(tools[key]) === text) return key;
    }
  };
  /** @type {Map<string, Array<Omit<DumpedCase, "tools"> & { tools: string[] }>>} */
  const byTemplate = new Map();
  for (const c of cases) {
    const name = basename(c.template).replace(/\.jinja$/, "");
    const list = byTemplate.get(name) ?? [];
    byTemplate.set(name, list);
    const { tools: caseTools, ...rest } = c;
    list.push({ ...rest, tools: caseTools.map(keyOf) });
  }
  writeFileSync(join(outDir, "tools.json"), JSON.stringify(tools, null, 2) + "\n");
  for (const [name, list] of byTemplate) {
    list.forEach((c, i) => (c.id = `${name}#${i + 1}@L${c.line}`));
    writeFileSync(join(outDir, `${name}.json`), JSON.stringify(list, null, 1) + "\n");
  }
  writeFileSync(
    join(outDir, "SOURCE.md"),
    [
      "# llama.cpp chat-parser cases",
      "",
      `Exported from llama.cpp ${commit} (the source inside node-llama-cpp ${NODE_LLAMA_CPP_VERSION}),`,
      "`tests/test-chat.cpp`, by `node scripts/llama-chat-fixtures.mjs`. Do not edit by hand: rerun the script.",
      "llama.cpp is MIT-licensed; these are its test inputs and expectations.",
      "",
      `${cases.length} cases over ${byTemplate.size} templates; llama.cpp itself passes ${cases.filter((c) => c.llama_pass).length}.`,
      "",
      "Each case: `template`, `line` (of the `tst.test(` call), `input` (the model's raw output), `is_partial`,",
      "`tools` (names into tools.json), `tool_choice`, `parallel_tool_calls`, `reasoning_format`, `enable_thinking`,",
      "`generation_prompt` (what the rendered prompt ends with), `format` (llama.cpp's parser), `expect`",
      "(content, reasoning_content, tool_calls) and `actual` (what llama.cpp's parser returned).",
      "",
    ].join("\n"),
  );
  log(`${cases.length} cases over ${byTemplate.size} templates → ${outDir}`);
  const files = readdirSync(outDir).length;
  log(`${files} files written`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  exportCases(buildTestChat());
}
