// A scripted model for the tests: the real `ai` package's MockLanguageModelV3 (no network),
// driving a multi-step tool loop, and helpers that read what the model was sent.
import { MockLanguageModelV3, convertArrayToReadableStream } from 'ai/test';

const usage = (input, output) => ({
  inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: output, text: output, reasoning: undefined },
});

/** A generate result calling one tool. */
export function toolCall(toolName, input, id = `call_${toolName}_${Math.random().toString(36).slice(2, 8)}`) {
  return {
    content: [{ type: 'tool-call', toolCallId: id, toolName, input: JSON.stringify(input) }],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage: usage(12, 7),
    warnings: [],
  };
}

/** A generate result answering with text. */
export function answer(text) {
  return { content: [{ type: 'text', text }], finishReason: { unified: 'stop', raw: 'stop' }, usage: usage(20, 9), warnings: [] };
}

/** The tool results (or errors) in a prompt, oldest first: `[{toolName, type, value}]`. */
export function toolResults(prompt) {
  const out = [];
  for (const message of prompt ?? []) {
    if (message.role !== 'tool') continue;
    for (const part of message.content) {
      if (part.type === 'tool-result') out.push({ toolName: part.toolName, type: part.output?.type, value: part.output?.value });
    }
  }
  return out;
}

/**
 * A model whose i-th call answers `script[i](prompt)`; `calls` records every prompt.
 * Past the script it answers with the tool results it was sent.
 */
export function scriptedModel(script) {
  const calls = [];
  const respond = (options) => {
    calls.push(options.prompt);
    const step = script[calls.length - 1];
    return step ? step(options.prompt) : answer(JSON.stringify(toolResults(options.prompt)));
  };
  const model = new MockLanguageModelV3({
    modelId: 'mock-model',
    doGenerate: async (options) => respond(options),
    doStream: async (options) => {
      const result = respond(options);
      const parts = [{ type: 'stream-start', warnings: [] }, { type: 'response-metadata', modelId: 'mock-model' }];
      for (const part of result.content) {
        if (part.type === 'text') {
          parts.push({ type: 'text-start', id: 't' });
          for (const word of part.text.split(/(?<= )/)) parts.push({ type: 'text-delta', id: 't', delta: word });
          parts.push({ type: 'text-end', id: 't' });
        } else {
          parts.push({ type: 'tool-input-start', id: part.toolCallId, toolName: part.toolName });
          parts.push({ type: 'tool-input-delta', id: part.toolCallId, delta: part.input });
          parts.push({ type: 'tool-input-end', id: part.toolCallId });
          parts.push(part);
        }
      }
      parts.push({ type: 'finish', finishReason: result.finishReason, usage: result.usage });
      return { stream: convertArrayToReadableStream(parts) };
    },
  });
  return { model, calls };
}
