// The tool-level ranking signals the index multiplies a tool's evidence by: action agreement and
// the request's direct object (action.ts, through WordNet's verb relations and the lexicon), and
// deprecation with the replacement a deprecated tool names (deprecated.ts).
export { ACTION, ActionIndex, directObject, isQuestion, queryActions, requestVerbs, toolActions, type QueryAction, type RequestVerbs } from "./action.js";
export { isDeprecated, replacementOf } from "./deprecated.js";
export { defaultQuantity, requestQuantity, severalPlurals, toolTakesSeveral, type Quantity } from "./number.js";
