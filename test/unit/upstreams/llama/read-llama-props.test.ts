import { describe, expect, it } from "vitest";
import { parseLlamaProps } from "../../../../src/upstreams/llama/read-llama-props.ts";

describe("parseLlamaProps", () => {
  it("context from default_generation_settings.n_ctx (per slot), vision from modalities, reasoning from caps or the template", () => {
    expect(
      parseLlamaProps({
        default_generation_settings: { n_ctx: 4096 },
        modalities: { vision: true, audio: false },
        chat_template_caps: { supports_tool_calls: false, supports_preserve_reasoning: false },
        chat_template: "{% for m in messages %}{{ m.content }}{% endfor %}",
      }),
    ).toEqual({ contextWindow: 4096, vision: true, reasoning: false });
    expect(parseLlamaProps({ default_generation_settings: { n_ctx: 1024 }, chat_template: "{%- if message.reasoning_content %}<think>{% endif %}" }).reasoning).toBe(true);
    expect(parseLlamaProps({ chat_template_caps: { supports_reasoning: false }, chat_template: "<think>" }).reasoning).toBe(false);
    expect(parseLlamaProps({ chat_template_caps: { supports_reasoning: true } }).reasoning).toBe(true);
  });

  it("anything missing or malformed is left out or false, never thrown", () => {
    expect(parseLlamaProps(null)).toEqual({ vision: false, reasoning: false });
    expect(parseLlamaProps({ default_generation_settings: { n_ctx: "big" }, modalities: { vision: "yes" } })).toEqual({ vision: false, reasoning: false });
  });
});
