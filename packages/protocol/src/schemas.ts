/**
 * Request and answer shapes of API v1 as zod/mini schemas: the server validates requests with
 * them, the CLI reads answers by their types, and the OpenAPI document is generated from them.
 * Answer schemas are loose (a newer server may add fields).
 */
import * as z from "zod/mini";
import { SHA256_HEX, UPLOAD_ID } from "./ids.js";
import { lazySchema } from "./lazy-schema.js";

const digits = (max: number) => z.pipe(z.string().check(z.regex(new RegExp(`^\\d{1,${max}}$`))), z.transform(Number));
const entryId = lazySchema(() => z.string().check(z.minLength(1), z.maxLength(256)));

/** `GET /v1/sessions?limit=&cursor=` (limit is clamped to 1..100, default 50). */
export const ListSessionsQuery = lazySchema(() =>
  z.object({
    limit: z.optional(digits(3)),
    cursor: z.optional(z.string().check(z.maxLength(2048))),
  }),
);
/** `GET /v1/sessions/:id/context?leaf=`. */
export const ContextQuery = lazySchema(() => z.object({ leaf: z.optional(entryId) }));
/** `GET /v1/sessions/:id/raw?generation=`. */
export const RawQuery = lazySchema(() => z.object({ generation: z.optional(digits(9)) }));
/**
 * `GET /s/:token` (and its `/entries`, `/tree`, `/context`): `leaf` or pi's `leafId` picks the
 * branch; `target` or pi's `targetId` an entry to open at; `before`/`from` a window of the path by
 * position; `after` the entries after one (live updates).
 */
export const SharePageQuery = lazySchema(() =>
  z.object({
    leaf: z.optional(entryId),
    leafId: z.optional(entryId),
    target: z.optional(entryId),
    targetId: z.optional(entryId),
    before: z.optional(digits(9)),
    from: z.optional(digits(9)),
    after: z.optional(entryId),
  }),
);
/** `GET /v1/search?q=&limit=&cursor=&team=` (limit 1..100, default 20; `q` in the query language of `@pisync/search`). */
export const SearchQuery = lazySchema(() =>
  z.object({
    q: z.string().check(z.minLength(1), z.maxLength(1000)),
    limit: z.optional(digits(3)),
    cursor: z.optional(z.string().check(z.maxLength(200))),
    /** A team of the caller's: its sessions are searched instead of the caller's own. */
    team: z.optional(z.string().check(z.maxLength(64))),
  }),
);
/**
 * `GET /s/:token/find?q=&from=` (and the library's): the tree's search over the whole text of
 * every entry; `from` is where a page of matches starts (the previous answer's `next`).
 */
export const TreeFindQuery = lazySchema(() =>
  z.object({
    q: z.string().check(z.minLength(1), z.maxLength(200)),
    from: z.optional(digits(9)),
  }),
);
/** One page of the tree's search: positions in the compact tree's arrays, in order. */
export const TreeMatches = lazySchema(() =>
  z.object({
    matches: z.array(z.number()),
    next: z.optional(z.number()),
    total: z.number(),
  }),
);
/** `GET /s/:token/state|entries?after=`. */
export const ShareAfterQuery = lazySchema(() => z.object({ after: z.optional(z.string().check(z.maxLength(256))) }));

/** `POST /v1/sessions/:id/uploads`: the line's length and SHA-256 (hex), which the upload must match. */
export const CreateUpload = lazySchema(() =>
  z.object({
    length: z.number().check(z.int(), z.positive()),
    sha256: z.string().check(z.regex(SHA256_HEX)),
  }),
);
/** `POST /v1/sessions/:id/shares`: `expiresIn` in seconds; without `leafId` the share is live and whole. */
export const CreateShare = lazySchema(() =>
  z.object({
    leafId: z.optional(entryId),
    expiresIn: z.optional(z.number().check(z.int(), z.positive())),
    maskSecrets: z.optional(z.boolean()),
  }),
);
/** `POST /v1/tokens`. */
export const CreateToken = lazySchema(() => z.object({ name: z.string().check(z.minLength(1), z.maxLength(100)) }));

const Problem = lazySchema(() =>
  z.object({
    kind: z.string(),
    line: z.optional(z.number()),
    offset: z.optional(z.number()),
    length: z.optional(z.number()),
    message: z.string(),
  }),
);

/** The answer of an append (PATCH or PUT). */
export const AppendResponse = lazySchema(() =>
  z.looseObject({
    length: z.number(),
    offset: z.number(),
    generation: z.number(),
    entries: z.number(),
    leafId: z.nullable(z.string()),
    retry: z.boolean(),
    problems: z.array(Problem),
    /**
     * Blobs (`blob:sha256:`) the body newly names that the server lacks (a delete of the last
     * session naming one raced it): the client sends them. Absent when none is.
     */
    missingBlobs: z.optional(z.array(z.string())),
  }),
);
export type AppendResponse = z.infer<typeof AppendResponse>;

/**
 * The answer to a rename (`PUT /v1/sessions/:id/title`): the title slot replaced in place, in
 * the same generation at the same length; `retry`: it already held these bytes.
 */
export const RenameResponse = lazySchema(() =>
  z.looseObject({
    offset: z.number(),
    generation: z.number(),
    retry: z.boolean(),
    title: z.optional(z.string()),
  }),
);
export type RenameResponse = z.infer<typeof RenameResponse>;

/** Where to PUT one large line; `authorization`: send the bearer token (only to this API). */
export const UploadTicket = lazySchema(() =>
  z.looseObject({
    uploadId: z.string().check(z.regex(UPLOAD_ID)),
    url: z.string(),
    method: z.literal("PUT"),
    authorization: z.boolean(),
    expiresAt: z.string(),
  }),
);
export type UploadTicket = z.infer<typeof UploadTicket>;

const sessionFields = () => ({
  id: z.string(),
  generation: z.number(),
  generations: z.number(),
  bytes: z.number(),
  entries: z.number(),
  name: z.optional(z.string()),
  cwd: z.optional(z.string()),
  firstMessage: z.optional(z.string()),
  tokens: z.number(),
  cost: z.number(),
  leafId: z.nullable(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
  startedAt: z.optional(z.string()),
  /** The time of the session's own last entry (absent from older servers). */
  lastAt: z.optional(z.string()),
  problemCount: z.number(),
});
/** A session's metadata in a list; `machines`: the names of the user's devices that wrote it, when kept. */
export const SessionSummary = lazySchema(() =>
  z.looseObject({ ...sessionFields(), machines: z.optional(z.array(z.string())) }),
);
export type SessionSummary = z.infer<typeof SessionSummary>;
/** Bytes from `offset` on (to the next run) were appended by `device` (the device's name; "removed device" once its token is revoked). */
export const WriterRun = lazySchema(() => z.looseObject({ offset: z.number(), device: z.string() }));
export type WriterRun = z.infer<typeof WriterRun>;
/**
 * `GET /v1/sessions/:id`: the metadata with the first problems, and who wrote the current
 * generation's bytes (`writers`, in offset order; absent from older servers and generations).
 */
export const SessionMeta = lazySchema(() =>
  z.looseObject({
    ...sessionFields(),
    problems: z.array(Problem),
    writers: z.optional(z.array(WriterRun)),
  }),
);
export type SessionMeta = z.infer<typeof SessionMeta>;
/** `GET /v1/sessions`. */
export const SessionList = lazySchema(() =>
  z.looseObject({ sessions: z.array(SessionSummary), cursor: z.optional(z.string()) }),
);
export type SessionList = z.infer<typeof SessionList>;

/** `GET /v1/sessions/:id/tree`. */
export const Tree = lazySchema(() =>
  z.looseObject({
    leafId: z.nullable(z.string()),
    entries: z.array(
      z.looseObject({
        id: z.string(),
        parentId: z.nullable(z.string()),
        type: z.optional(z.string()),
        role: z.optional(z.string()),
        timestamp: z.optional(z.string()),
        label: z.optional(z.string()),
        preview: z.optional(z.string()),
      }),
    ),
  }),
);

/** The context pi would send the model (`buildSessionContext`'s answer). */
export const Context = lazySchema(() =>
  z.looseObject({
    messages: z.array(z.unknown()),
    thinkingLevel: z.optional(z.string()),
    model: z.optional(z.nullable(z.unknown())),
    leafId: z.optional(z.nullable(z.string())),
  }),
);

/** `GET /v1/sessions/:id/generations`, oldest first. */
export const GenerationList = lazySchema(() =>
  z.looseObject({
    generations: z.array(
      z.looseObject({
        generation: z.number(),
        bytes: z.number(),
        lines: z.number(),
        createdAt: z.string(),
        reason: z.optional(z.string()),
      }),
    ),
  }),
);
export type GenerationList = z.infer<typeof GenerationList>;

/** The status of a share link. */
export const ShareStatus = lazySchema(() => z.enum(["active", "expired", "revoked"]));
/** A share link, for its owner. */
export const ShareView = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    sessionId: z.string(),
    leafId: z.nullable(z.string()),
    url: z.string(),
    createdAt: z.string(),
    expiresAt: z.string(),
    revokedAt: z.nullable(z.string()),
    maskSecrets: z.boolean(),
    status: ShareStatus,
    /** How many times the link's page was opened, and when last (no reader's address is kept). */
    views: z.optional(z.number()),
    lastViewedAt: z.optional(z.nullable(z.string())),
    /** How many times its file (`/raw`) or context (`/context`) was downloaded. */
    downloads: z.optional(z.number()),
  }),
);
export type ShareView = z.infer<typeof ShareView>;
/** `GET /v1/shares`. */
export const ShareList = lazySchema(() => z.looseObject({ shares: z.array(ShareView) }));

/** `GET /v1/tokens`. */
export const TokenList = lazySchema(() =>
  z.looseObject({
    tokens: z.array(
      z.looseObject({
        id: z.string(),
        name: z.string(),
        createdAt: z.string(),
        lastUsedAt: z.optional(z.string()),
        current: z.boolean(),
      }),
    ),
  }),
);
/** `POST /v1/tokens`: the token itself is shown this once. */
export const CreatedToken = lazySchema(() => z.looseObject({ id: z.string(), name: z.string(), token: z.string() }));

/** `PATCH /v1/tokens/:id`: the token's id and new name. */
export const RenamedToken = lazySchema(() => z.looseObject({ id: z.string(), name: z.string() }));
/**
 * `DELETE /v1/sessions/:id` with `Prefer: return=representation`: what went. Besides these, the
 * session's tree index, its usage in insights and (shortly after) its search entries are gone.
 */
export const DeleteReceipt = lazySchema(() =>
  z.looseObject({
    id: z.string(),
    generations: z.number(),
    bytes: z.number(),
    objects: z.number(),
    sharesRevoked: z.array(z.string()),
    /** Blobs (images) removed with it: those no other session of the account names (absent from older servers). */
    blobs: z.optional(z.number()),
  }),
);
export type DeleteReceipt = z.infer<typeof DeleteReceipt>;

/** `GET /v1/whoami`: the account, the device (the token's id and name), the id of the server's data. */
export const Whoami = lazySchema(() =>
  z.looseObject({
    user: z.string(),
    device: z.looseObject({ id: z.string(), name: z.string() }),
    server: z.looseObject({ id: z.string() }),
  }),
);
export type Whoami = z.infer<typeof Whoami>;

/** `POST /v1/login-links`: where the browser goes once signed in (a path of this server; default `/`). */
export const CreateLoginLink = lazySchema(() => z.object({ next: z.optional(z.string().check(z.maxLength(2048))) }));
/** A one-time sign-in link: open `url` in a browser before `expiresAt` (60 s), once. */
export const LoginLink = lazySchema(() => z.looseObject({ url: z.string(), expiresAt: z.string() }));
/** `POST /v1/device/code`: the machine's host name, which the token will be called. */
export const StartDeviceCode = lazySchema(() => z.object({ name: z.optional(z.string().check(z.maxLength(255))) }));
/**
 * A device-code sign-in started (RFC 8628 §3.2): show `user_code` and `verification_uri`, then
 * poll `POST /v1/device/token` with `device_code` every `interval` seconds until `expires_in`.
 */
export const DeviceCode = lazySchema(() =>
  z.looseObject({
    device_code: z.string(),
    user_code: z.string(),
    verification_uri: z.string(),
    verification_uri_complete: z.string(),
    expires_in: z.number(),
    interval: z.number(),
  }),
);
/** `POST /v1/device/token`: one poll. */
export const PollDeviceCode = lazySchema(() =>
  z.object({ device_code: z.string().check(z.minLength(1), z.maxLength(200)) }),
);
/** An approved device code's token, shown this once, with the token's public id and name. */
export const DeviceToken = lazySchema(() => z.looseObject({ token: z.string(), id: z.string(), name: z.string() }));

/** The form of a library page's POST: its CSRF token (or the `X-CSRF-Token` header instead). */
export const CsrfForm = lazySchema(() => z.object({ csrf: z.optional(z.string()) }));

/** A search answer: sessions ranked by their best entry, each with its best entries and their snippets. */
export const SearchPage = lazySchema(() =>
  z.looseObject({
    sessions: z.array(
      z.looseObject({
        sessionId: z.string(),
        name: z.optional(z.string()),
        cwd: z.optional(z.string()),
        entries: z.array(
          z.looseObject({
            entryId: z.string(),
            kind: z.string(),
            time: z.number(),
            snippet: z.array(z.object({ text: z.string(), hit: z.boolean() })),
          }),
        ),
      }),
    ),
    cursor: z.optional(z.string()),
  }),
);

const DAY_TEXT = lazySchema(() => z.string().check(z.regex(/^\d{4}-\d{2}-\d{2}$/)));
/**
 * `GET /v1/insights?since=&from=&to=` (and the library's `/insights`): days `YYYY-MM-DD` (UTC,
 * inclusive), or `since` as `all`, `30d`, `12w` or a day; default the last 30 days. A range over a
 * year is fitted to the days that have usage (and to ten years at most): the report's `from` and
 * `to` say what it covers.
 */
export const InsightsQuery = lazySchema(() =>
  z.object({
    from: z.optional(DAY_TEXT),
    to: z.optional(DAY_TEXT),
    since: z.optional(z.string().check(z.regex(/^(all|\d{1,4}[dw]|\d{4}-\d{2}-\d{2})$/))),
    /** A team of the caller's: its sessions' usage (every member's) instead of the caller's own. */
    team: z.optional(z.string().check(z.maxLength(64))),
  }),
);

const usageSums = () => ({
  input: z.number(),
  output: z.number(),
  cacheRead: z.number(),
  cacheWrite: z.number(),
  tokens: z.number(),
  cost: z.number(),
  ms: z.number(),
  turns: z.number(),
  sessions: z.number(),
});
const UsageGroup = lazySchema(() => z.looseObject({ key: z.string(), label: z.string(), ...usageSums() }));
/** `GET /v1/insights`: tokens, cost (dollars) and model time (ms) over a range, grouped every way. */
export const InsightsReport = lazySchema(() =>
  z.looseObject({
    from: z.string(),
    to: z.string(),
    totals: z.looseObject(usageSums()),
    byDay: z.array(UsageGroup),
    byWeek: z.array(UsageGroup),
    byModel: z.array(UsageGroup),
    byProject: z.array(UsageGroup),
    byDevice: z.array(UsageGroup),
    /** A team's report, for its owner and admins: the totals of each member. */
    byMember: z.optional(z.array(UsageGroup)),
    byTool: z.array(z.looseObject({ tool: z.string(), calls: z.number(), ms: z.number(), sessions: z.number() })),
    topSessions: z.array(
      z.looseObject({
        sessionId: z.string(),
        title: z.string(),
        cwd: z.optional(z.string()),
        cost: z.number(),
        tokens: z.number(),
        turns: z.number(),
      }),
    ),
    uncounted: z.number(),
  }),
);
export type InsightsReport = z.infer<typeof InsightsReport>;

/** A member's role in a team. */
export const TeamRole = lazySchema(() => z.enum(["owner", "admin", "member"]));
/** `POST /v1/teams`. */
export const CreateTeam = lazySchema(() => z.object({ name: z.string().check(z.minLength(1), z.maxLength(100)) }));
/** A team as its member sees it (`POST /v1/teams` answers one, with `role: "owner"`). */
export const TeamView = lazySchema(() => z.looseObject({ id: z.string(), name: z.string(), role: TeamRole }));
export type TeamView = z.infer<typeof TeamView>;
/** `GET /v1/teams`: the caller's teams. */
export const TeamList = lazySchema(() => z.looseObject({ teams: z.array(TeamView) }));
export type TeamList = z.infer<typeof TeamList>;
/** `POST /v1/teams/:team/invites`: the role the invited user gets (default member). */
export const CreateInvite = lazySchema(() => z.object({ role: z.optional(z.enum(["member", "admin"])) }));
/** A one-time invite link: its last path segment is the invite's secret; it works for 7 days. */
export const InviteLink = lazySchema(() => z.looseObject({ url: z.string(), expiresAt: z.optional(z.string()) }));
export type InviteLink = z.infer<typeof InviteLink>;
/** `POST /v1/join/:token`: the team joined and the role in it. */
export const Joined = lazySchema(() =>
  z.looseObject({ team: z.looseObject({ id: z.string(), name: z.string() }), role: TeamRole }),
);
export type Joined = z.infer<typeof Joined>;
/** `PUT /v1/sessions/:id/team`: a team of the caller's, or null to take the session back. */
export const SetSessionTeam = lazySchema(() => z.object({ team: z.nullable(z.string().check(z.maxLength(64))) }));
/** The answer: the team the session is now in, or null. */
export const SessionTeam = lazySchema(() =>
  z.looseObject({ id: z.string(), team: z.nullable(z.looseObject({ id: z.string(), name: z.string() })) }),
);
export type SessionTeam = z.infer<typeof SessionTeam>;
/** `GET /v1/teams/:team/sessions`: the team's sessions, latest conversation first. */
export const TeamSessionList = lazySchema(() =>
  z.looseObject({
    sessions: z.array(
      z.looseObject({
        id: z.string(),
        owner: z.string(),
        title: z.string(),
        cwd: z.optional(z.string()),
        lastAt: z.string(),
        addedAt: z.string(),
        entries: z.number(),
      }),
    ),
    cursor: z.optional(z.string()),
  }),
);
export type TeamSessionList = z.infer<typeof TeamSessionList>;
/** `GET /v1/teams/:team/sessions?limit=&cursor=` and `/audit` (limit 1..100). */
export const TeamPageQuery = lazySchema(() =>
  z.object({
    limit: z.optional(digits(3)),
    cursor: z.optional(z.string().check(z.maxLength(2048))),
  }),
);
/** `GET /v1/teams/:team/members`. */
export const MemberList = lazySchema(() =>
  z.looseObject({ members: z.array(z.looseObject({ user: z.string(), role: TeamRole, joinedAt: z.string() })) }),
);
export type MemberList = z.infer<typeof MemberList>;
/**
 * A team's policy: `publicLinks` (may share links of the team's sessions be made and opened).
 * Later rules are optional fields, so a client that sends only today's keeps working.
 */
export const TeamPolicy = lazySchema(() => z.object({ publicLinks: z.boolean() }));
export type TeamPolicy = z.infer<typeof TeamPolicy>;
/** `GET /v1/teams/:team/audit`: events newest first. */
export const AuditList = lazySchema(() =>
  z.looseObject({
    events: z.array(
      z.looseObject({
        at: z.string(),
        actor: z.string(),
        action: z.string(),
        target: z.optional(z.string()),
        details: z.optional(z.record(z.string(), z.string())),
      }),
    ),
    cursor: z.optional(z.string()),
  }),
);
export type AuditList = z.infer<typeof AuditList>;
