/**
 * Schemas of pi's session format (v3: both revisions of the spec, and what pi 1.x added to it:
 * system messages, `usage` and `context_edit` entries, `compaction.systemMessage`, timing and
 * nested-call fields) and of what other writers put in the same files (rho, oh-my-pi). They serve reading and reporting, never rewriting:
 * every object is loose, so unknown fields pass through untouched, and unknown entry types
 * are kept as {@link UnknownEntry}.
 */
import * as z from "zod/mini";

/**
 * The schema `build` makes, made on the first access to any of its properties instead of at
 * import (a program that imports the format but never checks an entry, such as the Lambda
 * function's append, does not build them); it stands for that schema everywhere.
 */
function lazySchema<T extends object>(build: () => T): T {
  let built: T | undefined;
  const target = (): T => (built ??= build());
  return new Proxy({} as T, {
    get: (_, key) => Reflect.get(target(), key),
    set: (_, key, value) => Reflect.set(target(), key, value),
    has: (_, key) => Reflect.has(target(), key),
    ownKeys: () => Reflect.ownKeys(target()),
    getOwnPropertyDescriptor: (_, key) => {
      const found = Reflect.getOwnPropertyDescriptor(target(), key);
      // Configurable: the proxy's empty target cannot hold the schema's fixed properties.
      return found && { ...found, configurable: true };
    },
    getPrototypeOf: () => Reflect.getPrototypeOf(target()),
  });
}

const looseRecord = lazySchema(() => z.record(z.string(), z.unknown()));

export const TextContent = lazySchema(() => z.looseObject({ type: z.literal("text"), text: z.string() }));
export const ImageContent = lazySchema(() =>
  z.looseObject({ type: z.literal("image"), data: z.string(), mimeType: z.string() }),
);
export const ThinkingContent = lazySchema(() =>
  z.looseObject({
    type: z.literal("thinking"),
    thinking: z.string(),
    thinkingSignature: z.optional(z.string()),
    redacted: z.optional(z.boolean()),
  }),
);
export const ToolCall = lazySchema(() =>
  z.looseObject({
    type: z.literal("toolCall"),
    id: z.string(),
    name: z.string(),
    arguments: looseRecord,
    thoughtSignature: z.optional(z.string()),
  }),
);

export const Usage = lazySchema(() =>
  z.looseObject({
    input: z.number(),
    output: z.number(),
    cacheRead: z.number(),
    cacheWrite: z.number(),
    cacheWrite1h: z.optional(z.number()),
    reasoning: z.optional(z.number()),
    totalTokens: z.number(),
    cost: z.looseObject({
      input: z.number(),
      output: z.number(),
      cacheRead: z.number(),
      cacheWrite: z.number(),
      total: z.number(),
    }),
  }),
);

const UserContent = lazySchema(() => z.union([z.string(), z.array(z.union([TextContent, ImageContent]))]));

/** rho's list of files that went with a user message (pi ignores it). */
export const Attachment = lazySchema(() =>
  z.looseObject({
    kind: z.optional(z.string()),
    name: z.optional(z.string()),
    path: z.optional(z.string()),
    mimeType: z.optional(z.string()),
    about: z.optional(z.string()),
  }),
);

export const UserMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("user"),
    /** pi 1.x reads `null` content as `[]` (SDK callers and hand edits write it). */
    content: z.nullable(UserContent),
    timestamp: z.number(),
    attachments: z.optional(z.array(Attachment)),
    typed: z.optional(z.string()),
  }),
);

/** pi 1.x added `pending` and `deferred` (a response fetched later). */
export const StopReason = lazySchema(() =>
  z.enum(["stop", "length", "toolUse", "error", "aborted", "pending", "deferred"]),
);

/** A tool declaration, as a system message adds it (pi 1.x). */
export const ToolDefinition = lazySchema(() =>
  z.looseObject({ name: z.string(), description: z.string(), parameters: z.unknown() }),
);

/**
 * pi 1.x: the system prompt and tool set at a point of the transcript. The first request of a
 * session writes one with every section and tool; later ones patch `sections` by name (`null`
 * removes one) and list `toolsAdded`/`toolsRemoved`. Replayed in order they give the current prompt.
 */
export const SystemMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("system"),
    content: z.union([z.string(), z.array(TextContent)]),
    sections: z.optional(z.record(z.string(), z.nullable(z.string()))),
    toolsAdded: z.optional(z.array(ToolDefinition)),
    toolsRemoved: z.optional(z.array(z.looseObject({ name: z.string() }))),
    timestamp: z.number(),
  }),
);

export const AssistantMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("assistant"),
    // Image parts are oh-my-pi's extension; upstream pi's assistant messages have none.
    content: z.array(z.union([TextContent, ThinkingContent, ToolCall, ImageContent])),
    api: z.optional(z.string()),
    provider: z.string(),
    model: z.string(),
    responseModel: z.optional(z.string()),
    responseId: z.optional(z.string()),
    diagnostics: z.optional(z.array(z.unknown())),
    usage: Usage,
    stopReason: StopReason,
    errorMessage: z.optional(z.string()),
    /** pi 1.x: the thinking level pi requested, the provider's own effort name, how long the response took. */
    thinkingLevel: z.optional(z.string()),
    providerThinkingLevel: z.optional(z.string()),
    durationMs: z.optional(z.number()),
    timestamp: z.number(),
  }),
);

/** pi 1.x: the calls a tool made to other tools while it ran (kept for the record, not sent to the model). */
export const NestedToolCalls = lazySchema(() =>
  z.looseObject({
    calls: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        arguments: z.optional(looseRecord),
        argumentsBytes: z.optional(z.number()),
        status: z.string(),
        durationMs: z.optional(z.number()),
        error: z.optional(z.string()),
      }),
    ),
    complete: z.boolean(),
  }),
);

export const ToolResultMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("toolResult"),
    toolCallId: z.string(),
    toolName: z.string(),
    content: z.array(z.union([TextContent, ImageContent])),
    details: z.optional(z.unknown()),
    /** Newer spec: LLM work done by the tool itself. */
    usage: z.optional(Usage),
    nestedCalls: z.optional(NestedToolCalls),
    isError: z.boolean(),
    timestamp: z.number(),
    durationMs: z.optional(z.number()),
  }),
);

export const BashExecutionMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("bashExecution"),
    command: z.string(),
    output: z.string(),
    exitCode: z.optional(z.nullable(z.number())),
    cancelled: z.boolean(),
    truncated: z.boolean(),
    fullOutputPath: z.optional(z.string()),
    excludeFromContext: z.optional(z.boolean()),
    timestamp: z.number(),
  }),
);

export const CustomMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("custom"),
    customType: z.string(),
    content: UserContent,
    display: z.boolean(),
    details: z.optional(z.unknown()),
    timestamp: z.number(),
  }),
);

export const BranchSummaryMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("branchSummary"),
    summary: z.string(),
    fromId: z.string(),
    timestamp: z.number(),
  }),
);

export const CompactionSummaryMessage = lazySchema(() =>
  z.looseObject({
    role: z.literal("compactionSummary"),
    summary: z.string(),
    tokensBefore: z.optional(z.number()),
    timestamp: z.number(),
  }),
);

/** pi's AgentMessage union. */
export const AgentMessage = lazySchema(() =>
  z.discriminatedUnion("role", [
    SystemMessage,
    UserMessage,
    AssistantMessage,
    ToolResultMessage,
    BashExecutionMessage,
    CustomMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
  ]),
);

const entryBase = () => ({
  id: z.string(),
  parentId: z.nullable(z.string()),
  timestamp: z.string(),
});

export const SessionHeader = lazySchema(() =>
  z.looseObject({
    type: z.literal("session"),
    version: z.optional(z.number()),
    id: z.string(),
    timestamp: z.string(),
    cwd: z.string(),
    parentSession: z.optional(z.string()),
    /** oh-my-pi keeps a title in the header. */
    title: z.optional(z.string()),
  }),
);

/** oh-my-pi's fixed-width title slot, written before the header line. */
export const TitleSlot = lazySchema(() => z.looseObject({ type: z.literal("title"), title: z.optional(z.string()) }));

export const MessageEntry = lazySchema(() =>
  z.looseObject({ type: z.literal("message"), ...entryBase(), message: AgentMessage }),
);

/** pi writes `provider` + `modelId`; rho and oh-my-pi write `model: "provider/modelId"`. */
export const ModelChangeEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("model_change"),
    ...entryBase(),
    provider: z.optional(z.string()),
    modelId: z.optional(z.string()),
    model: z.optional(z.string()),
  }),
);

export const ThinkingLevelChangeEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("thinking_level_change"),
    ...entryBase(),
    thinkingLevel: z.nullable(z.string()),
  }),
);

export const CompactionEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("compaction"),
    ...entryBase(),
    summary: z.string(),
    /** Optional in the newer spec, where `retainedTail` replaces it. */
    firstKeptEntryId: z.optional(z.string()),
    tokensBefore: z.optional(z.number()),
    /** Newer spec: the kept messages, materialized. */
    retainedTail: z.optional(z.array(z.unknown())),
    usage: z.optional(Usage),
    details: z.optional(z.unknown()),
    fromHook: z.optional(z.boolean()),
    /** pi 1.x: the whole prompt and tool set at the boundary, placed before the summary in the context. */
    systemMessage: z.optional(SystemMessage),
    /** rho's additions. */
    tokensAfter: z.optional(z.number()),
    method: z.optional(z.string()),
    fromExtension: z.optional(z.boolean()),
  }),
);

export const BranchSummaryEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("branch_summary"),
    ...entryBase(),
    fromId: z.string(),
    summary: z.string(),
    usage: z.optional(Usage),
    details: z.optional(z.unknown()),
    fromHook: z.optional(z.boolean()),
  }),
);

/** pi 1.x: LLM work billed outside the conversation (such as cache warming); counted in totals only. */
export const UsageEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("usage"),
    ...entryBase(),
    /** What the work was (`cache_warm`...); unknown kinds are ordinary usage. */
    kind: z.string(),
    provider: z.string(),
    model: z.string(),
    usage: Usage,
    note: z.optional(z.string()),
  }),
);

/** Content a context edit puts in place of its target's. */
const EditedContent = lazySchema(() =>
  z.union([z.string(), z.array(z.union([TextContent, ImageContent, ThinkingContent, ToolCall]))]),
);

/**
 * pi 1.x: an edit of an earlier entry's part in the model context, for the branch it is on:
 * `null` removes the target from the context, a replacement swaps its content.
 */
export const ContextEditEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("context_edit"),
    ...entryBase(),
    targetId: z.string(),
    replacement: z.nullable(z.looseObject({ content: EditedContent })),
  }),
);

export const CustomEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("custom"),
    ...entryBase(),
    customType: z.string(),
    data: z.optional(z.unknown()),
  }),
);

export const CustomMessageEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("custom_message"),
    ...entryBase(),
    customType: z.string(),
    /** pi 1.x reads `null` content as `[]`. */
    content: z.nullable(UserContent),
    display: z.boolean(),
    details: z.optional(z.unknown()),
  }),
);

export const LabelEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("label"),
    ...entryBase(),
    targetId: z.string(),
    label: z.optional(z.string()),
  }),
);

export const SessionInfoEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("session_info"),
    ...entryBase(),
    name: z.optional(z.string()),
  }),
);

/** oh-my-pi's title entries; pi does not know them and keeps them on the chain. */
export const TitleChangeEntry = lazySchema(() =>
  z.looseObject({
    type: z.literal("title_change"),
    ...entryBase(),
    title: z.string(),
    source: z.optional(z.string()),
  }),
);

/** Every entry type the spec names, by `type`. */
export const KnownEntrySchemas = {
  message: MessageEntry,
  model_change: ModelChangeEntry,
  thinking_level_change: ThinkingLevelChangeEntry,
  compaction: CompactionEntry,
  usage: UsageEntry,
  context_edit: ContextEditEntry,
  branch_summary: BranchSummaryEntry,
  custom: CustomEntry,
  custom_message: CustomMessageEntry,
  label: LabelEntry,
  session_info: SessionInfoEntry,
  title_change: TitleChangeEntry,
} as const;

/** An entry of a type nobody specified: kept and carried along. */
export const UnknownEntry = lazySchema(() => z.looseObject({ type: z.string(), ...entryBase() }));

export type TextContent = z.infer<typeof TextContent>;
export type ImageContent = z.infer<typeof ImageContent>;
export type ThinkingContent = z.infer<typeof ThinkingContent>;
export type ToolCall = z.infer<typeof ToolCall>;
export type Usage = z.infer<typeof Usage>;
export type SystemMessage = z.infer<typeof SystemMessage>;
export type UserMessage = z.infer<typeof UserMessage>;
export type AssistantMessage = z.infer<typeof AssistantMessage>;
export type ToolResultMessage = z.infer<typeof ToolResultMessage>;
export type BashExecutionMessage = z.infer<typeof BashExecutionMessage>;
export type CustomMessage = z.infer<typeof CustomMessage>;
export type BranchSummaryMessage = z.infer<typeof BranchSummaryMessage>;
export type CompactionSummaryMessage = z.infer<typeof CompactionSummaryMessage>;
export type AgentMessage = z.infer<typeof AgentMessage>;
export type SessionHeader = z.infer<typeof SessionHeader>;
export type MessageEntry = z.infer<typeof MessageEntry>;
export type ModelChangeEntry = z.infer<typeof ModelChangeEntry>;
export type ThinkingLevelChangeEntry = z.infer<typeof ThinkingLevelChangeEntry>;
export type CompactionEntry = z.infer<typeof CompactionEntry>;
export type UsageEntry = z.infer<typeof UsageEntry>;
export type ContextEditEntry = z.infer<typeof ContextEditEntry>;
export type BranchSummaryEntry = z.infer<typeof BranchSummaryEntry>;
export type CustomEntry = z.infer<typeof CustomEntry>;
export type CustomMessageEntry = z.infer<typeof CustomMessageEntry>;
export type LabelEntry = z.infer<typeof LabelEntry>;
export type SessionInfoEntry = z.infer<typeof SessionInfoEntry>;
export type TitleChangeEntry = z.infer<typeof TitleChangeEntry>;
export type UnknownEntry = z.infer<typeof UnknownEntry>;

/** Any entry of a session file, known type or not. */
export type SessionEntry =
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | UsageEntry
  | ContextEditEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry
  | TitleChangeEntry
  | UnknownEntry;

/**
 * Checks an entry against the schema of its type. Returns a readable reason when it does not
 * fit, `undefined` when it does (or when its type is not one the spec names).
 */
export function checkEntry(entry: unknown): string | undefined {
  if (entry === null || typeof entry !== "object") return "not an object";
  const type = (entry as { type?: unknown }).type;
  const schema =
    typeof type === "string" && Object.hasOwn(KnownEntrySchemas, type)
      ? KnownEntrySchemas[type as keyof typeof KnownEntrySchemas]
      : UnknownEntry;
  const result = schema.safeParse(entry);
  return result.success ? undefined : z.prettifyError(result.error).replaceAll("\n", "; ");
}
