// Renders a chat template with llama.cpp's own jinja and runs the parser llama.cpp derives from it on given
// outputs: a request as JSON (template, messages, tools, flags, inputs) in, the prompt, format, generation
// prompt and each parse out. Built by scripts/template-cases.mjs against the cached test-chat build.
#include "chat.h"
#include "chat-peg-parser.h"
#include "common.h"
#include "json.h"
#include <fstream>
#include <iostream>
#include <sstream>
using json = common_json;

static std::string read_file(const std::string & p) { std::ifstream f(p); std::stringstream s; s << f.rdbuf(); return s.str(); }
static json msg_json(const common_chat_msg & m) {
    json calls = json::array();
    for (auto & c : m.tool_calls) calls.push_back({{"name", c.name}, {"arguments", c.arguments}, {"id", c.id}});
    return {{"content", m.content}, {"reasoning_content", m.reasoning_content}, {"tool_calls", calls}};
}
int main(int argc, char ** argv) {
    json req = json::parse(read_file(argv[1]));
    auto tmpls = common_chat_templates_ptr(common_chat_templates_init(nullptr, read_file(req["template"].get<std::string>())));
    common_chat_templates_inputs in;
    in.messages = common_chat_msgs_parse_oaicompat(req["messages"]);
    if (req.contains("tools")) in.tools = common_chat_tools_parse_oaicompat(req["tools"]);
    in.add_generation_prompt = req.value("add_generation_prompt", true);
    in.enable_thinking = req.value("enable_thinking", true);
    in.parallel_tool_calls = req.value("parallel_tool_calls", false);
    in.reasoning_format = common_reasoning_format_from_name(req.value("reasoning_format", std::string("auto")));
    if (req.contains("kwargs")) for (auto it = req["kwargs"].begin(); it != req["kwargs"].end(); ++it) in.chat_template_kwargs[it.key()] = it.value().dump();
    json out;
    try {
        auto params = common_chat_templates_apply(tmpls.get(), in);
        out["prompt"] = params.prompt;
        out["format"] = common_chat_format_name(params.format);
        out["generation_prompt"] = params.generation_prompt;
        out["thinking_start_tag"] = params.thinking_start_tag;
        out["thinking_end_tags"] = params.thinking_end_tags;
        out["supports_thinking"] = params.supports_thinking;
        common_peg_arena arena;
        if (!params.parser.empty()) arena.load(params.parser);
        if (req.value("dump", false) && !params.parser.empty()) out["arena"] = arena.dump(arena.root());
        json parsed = json::array();
        for (auto & s : req.value("inputs", json::array())) {
            try {
                common_chat_parser_params pp(params);
                auto m = params.parser.empty() ? common_chat_parse(s.get<std::string>(), false, pp) : common_chat_peg_parse(arena, s.get<std::string>(), false, pp);
                parsed.push_back(msg_json(m));
            } catch (const std::exception & e) { parsed.push_back({{"error", e.what()}}); }
        }
        out["parsed"] = parsed;
    } catch (const std::exception & e) { out["error"] = e.what(); }
    std::cout << out.dump(1) << std::endl;
}
