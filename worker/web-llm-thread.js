// web-llm in a dedicated module Web Worker, so generation never blocks the page.
import { WebWorkerMLCEngineHandler } from "/vendor/web-llm/index.js";

const handler = new WebWorkerMLCEngineHandler();
self.onmessage = (event) => handler.onmessage(event);
