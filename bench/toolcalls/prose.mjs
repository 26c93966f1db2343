// Outputs that contain no call: irrelevance answers written as prose, prose that mentions a tool
// or shows JSON, code blocks that are not calls. A rewriter must leave all of them as content.

const lower = (/** @type {string} */ s) => s.charAt(0).toLowerCase() + s.slice(1).replace(/\.$/, "");

/**
 * @param {string} question
 * @param {import("./bfcl-data.mjs").GorillaFunction[]} functions
 * @param {{ int(n: number): number }} rng
 */
export function proseAnswers(question, functions, rng) {
  const f = functions[rng.int(functions.length)];
  const name = f.name;
  const params = Object.keys(f.parameters.properties ?? {});
  const p0 = params[0] ?? "value";
  const p1 = params[1] ?? "other";
  const q = question.length > 160 ? question.slice(0, 160) + "…" : question;
  return [
    `I'm sorry, but I can't help with that using the available tools. The ${name} function is meant to ${lower(f.description)}, which does not answer: "${q}"`,
    `None of the provided functions fit this request. ${name} takes ${params.join(", ") || "no parameters"}, but your question needs something else.`,
    `If you had the data, you could call ${name} with {"${p0}": 42, "${p1}": "example"}, but it does not apply here.`,
    `The function \`${name}(${params.map((p) => `${p}=...`).join(", ")})\` only covers a different task, so I will answer directly: I don't have enough information.`,
    `${name} is not suitable for this request.\nPlease ask something it can do, for example a question about its own task.`,
    `<think>\nThe user asks: ${q}\nThe only tool is ${name}; it does not apply.\n</think>\n\nI can't answer that with the tools I have.`,
    `Here is a summary of why I can't help:\n\`\`\`json\n{"answer": "unavailable", "reason": "no suitable tool", "tool": "${name}"}\n\`\`\``,
    `Available tools:\n- ${name}: ${f.description}\n\nNone of them answers your question, so here is a general explanation instead.`,
    `You can compute it yourself:\n\`\`\`python\nresult = ${name}(${params.map((p) => `${p}=1`).join(", ")})\nprint(result)\n\`\`\``,
    `{"response": "I can't help with that: ${name} does not apply."}`,
    `To use ${name} I would need {"${p0}": ...}; since that is not what you asked, I'll explain in words.\n\nStep 1: {first} ... Step 2: [details]`,
    `Sure, in JSON terms the answer is {"${p0}": "unknown"}. Let me know if you want more.`,
  ];
}
