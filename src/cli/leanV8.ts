/** Imported first by main.ts: re-executes the process with memory-lean V8 flags before anything else loads. */
import { applyLeanV8Flags } from "./v8Flags.js";

applyLeanV8Flags();
