/**
 * Every route of the API, as data: method, path (Hono's `:param` syntax), who may call it, its
 * parameters, body and answers. The OpenAPI document is generated from this list, and a test
 * proves every route the server registers is in it.
 */
import type * as z from "zod/mini";
import { ErrorBody, type ErrorCode } from "./errors.js";
import { HEADERS } from "./headers.js";
import {
  DEVICE_ID,
  INVITE_TOKEN,
  LOGIN_SECRET,
  SAFE_ID,
  SESSION_ID,
  SHA256_HEX,
  SHARE_ID,
  SHARE_TOKEN,
  TEAM_ID,
  TEAM_SESSION_REF,
  UPLOAD_ID,
} from "./ids.js";
import { McpMessage, ReadPage, ReadPageQuery } from "./mcp-pages.js";
import {
  AppendAnswer,
  AuditList,
  Context,
  ContextQuery,
  CreatedToken,
  CreateInvite,
  CreateLoginLink,
  CreateShare,
  CreateTeam,
  CreateToken,
  CreateUpload,
  CsrfForm,
  DeleteReceipt,
  DeviceCode,
  DeviceToken,
  GenerationList,
  InsightsQuery,
  InsightsReport,
  InviteLink,
  Joined,
  ListSessionsQuery,
  LoginLink,
  MemberList,
  PollDeviceCode,
  RawQuery,
  RenameAnswer,
  RenamedToken,
  SearchPage,
  SearchQuery,
  SessionList,
  SessionMeta,
  SessionTeam,
  SetSessionTeam,
  ShareAfterQuery,
  ShareList,
  SharePageQuery,
  ShareView,
  StartDeviceCode,
  TeamList,
  TeamPageQuery,
  TeamPolicy,
  TeamSessionList,
  TeamView,
  TokenList,
  Tree,
  TreeFindQuery,
  TreeMatches,
  UploadTicket,
  Whoami,
} from "./schemas.js";

/** What a request or answer body is. */
export type Content =
  | { json: z.ZodMiniType }
  | {
      type:
        | "application/x-ndjson"
        | "application/octet-stream"
        | "text/html"
        | "text/css"
        | "text/javascript"
        | "text/markdown"
        | "text/csv"
        | "image/png";
    }
  /** An HTML form's body (`application/x-www-form-urlencoded`), its fields described by `form`. */
  | { form: z.ZodMiniObject };

/** One answer of a route. */
export interface Answer {
  description: string;
  content?: Content;
  /** Error codes this answer may carry (its body is then {@link ErrorBody}). */
  codes?: readonly ErrorCode[];
}

/** One route of the contract. */
export interface RouteSpec {
  method: "get" | "head" | "post" | "put" | "patch" | "delete";
  /** Hono's syntax: `/v1/sessions/:id`. */
  path: string;
  summary: string;
  /**
   * `bearer`: `Authorization: Bearer <token>`; `link`: the share token in the path is the
   * credential; `library`: a browser session cookie (`pisync_session`; changes also need this
   * origin and the CSRF token) or a bearer token.
   */
  auth: "bearer" | "none" | "link" | "library";
  /** Patterns of the path's parameters. */
  params?: Record<string, RegExp>;
  query?: z.ZodMiniObject;
  /** Request headers beyond plain HTTP's, with whether they are required. */
  headers?: readonly { name: string; required?: boolean; description: string }[];
  body?: Content;
  answers: Record<number, Answer>;
}

const session = { id: SESSION_ID };
const link = { token: SHARE_TOKEN };
const json = (schema: z.ZodMiniType): Content => ({ json: schema });
const error = (description: string, ...codes: ErrorCode[]): Answer => ({
  description,
  content: json(ErrorBody),
  codes,
});
const missing = error("missing, or another user's", "not_found", "invalid_session_id");
const appendErrors = {
  400: error(
    "refused as it is; nothing stored",
    "invalid_offset",
    "invalid_if_match",
    "invalid_upload_id",
    "invalid_session_id",
    "empty_body",
    "incomplete_line",
    "unsupported_encoding",
    "bad_gzip",
    "missing_body_hash",
    "dictionary_mismatch",
    "upload_mismatch",
    "bad_request",
  ),
  404: error("no such session (an append after 0), or no such upload", "not_found"),
  409: error("the offset is not the committed length", "offset_conflict"),
  412: error("If-Match names another generation", "generation_mismatch"),
  413: error("over a limit", "too_large"),
  503: error(
    "the session kept changing under this append, or the storage did not answer: retry after Retry-After",
    "busy",
    "storage_unavailable",
  ),
};
const appendHeaders = [
  { name: HEADERS.uploadOffset, required: true, description: "where the body starts: the committed length" },
  { name: "If-Match", description: 'the generation the client believes is current, as "3"' },
  { name: "Content-Encoding", description: "gzip or pisync-deflate-dict" },
  { name: HEADERS.bodySha256, description: "with pisync-deflate-dict: hex SHA-256 of the decompressed body" },
  { name: HEADERS.upload, description: "an upload id: the line was uploaded beforehand, the body is empty" },
] as const;
const jsonl: Content = { type: "application/x-ndjson" };
const bytes: Content = { type: "application/octet-stream" };
const html: Content = { type: "text/html" };
const markdown: Content = { type: "text/markdown" };
const form: Content = { form: CsrfForm };
const libraryErrors = {
  401: error("not signed in (a browser gets the sign-in hint page)", "unauthorized"),
  403: error("from another origin, or without the CSRF token", "csrf_rejected"),
};
const linkErrors = {
  404: error("tampered or unknown link", "not_found"),
  410: error("expired or revoked link", "gone"),
};

/**
 * The signed-in library's pages: a browser session (cookie, with CSRF on changes) or a bearer
 * token. Changes are form posts answered 303 back to a page; another user's session or share
 * answers 404 like a missing one.
 */
const signedOut = error("not signed in", "unauthorized");
const missingPage = error("missing, or another user's", "not_found");
const css: Content = { type: "text/css" };
const js: Content = { type: "text/javascript" };
const seeOther = (where: string): Answer => ({ description: `done: see ${where}` });

const missingTeam = error("no such team of mine, or no such session in it", "not_found");

/** The library's routes (pages, their JSON for live search, form posts, assets). */
export const LIBRARY_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/",
    summary: "My sessions, latest conversation first (?cwd= ?model= ?from= ?to= ?cursor=), or a search (?q=)",
    auth: "library",
    answers: {
      200: { description: "the page", content: html },
      400: error("a malformed filter or query", "bad_request", "bad_query"),
      401: signedOut,
    },
  },
  {
    method: "get",
    path: "/library/search",
    summary: "The search box's live results (?q= and the page's filters), as /v1/search answers",
    auth: "library",
    answers: {
      200: { description: "a page of hits", content: json(SearchPage) },
      400: error("a malformed query", "bad_query"),
      401: signedOut,
      503: error("the search passed its time limit, or too many were waiting (Retry-After)", "search_timeout"),
    },
  },
  {
    method: "get",
    path: "/sessions/:id",
    summary: "One of my sessions in the viewer (tree, windows, permalinks), unmasked, with downloads and actions",
    auth: "library",
    params: session,
    query: SharePageQuery,
    answers: { 200: { description: "the page", content: html }, 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/sessions/:id/entries",
    summary: "A window of a branch of my session, rendered (the viewer's script)",
    auth: "library",
    params: session,
    query: SharePageQuery,
    answers: { 200: { description: "rendered entries", content: html }, 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/sessions/:id/tree",
    summary: "The compact tree of my session, for the viewer's navigator",
    auth: "library",
    params: session,
    query: SharePageQuery,
    answers: {
      200: { description: "ids, parents, kinds, previews, labels, times, leaf" },
      401: signedOut,
      404: missingPage,
    },
  },
  {
    method: "get",
    path: "/sessions/:id/state",
    summary: "My session's tip and size, for a live page (ETag), and its header's counts (facts)",
    auth: "library",
    params: session,
    answers: { 200: { description: "the state" }, 304: { description: "unchanged" }, 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/sessions/:id/find",
    summary: "The tree's search over the whole text of my session's entries, a page of matches at a time",
    auth: "library",
    params: session,
    query: TreeFindQuery,
    answers: {
      200: { description: "positions in the tree", content: json(TreeMatches) },
      401: signedOut,
      404: missingPage,
    },
  },
  {
    method: "get",
    path: "/sessions/:id/context",
    summary: "My session's context as JSON (?leaf=)",
    auth: "library",
    params: session,
    query: SharePageQuery,
    answers: { 200: { description: "the context", content: json(Context) }, 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/sessions/:id/raw",
    summary: "The exact bytes of my session's current generation or of ?generation=N, as a download",
    auth: "library",
    params: session,
    query: RawQuery,
    answers: { 200: { description: "the JSONL", content: jsonl }, 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/sessions/:id/blobs/:hash",
    summary: "An image my session names, kept as a blob (oh-my-pi's blob:sha256:), with its raster type",
    auth: "library",
    params: { ...session, hash: SHA256_HEX },
    answers: {
      200: { description: "the image (PNG, JPEG, GIF or WebP)", content: bytes },
      401: signedOut,
      404: error("the session names no such image, the backup lacks it, or it is no image", "not_found"),
    },
  },
  {
    method: "get",
    path: "/sessions/:id/delete",
    summary: "Delete my session: the confirmation page (asks for the id typed)",
    auth: "library",
    params: session,
    answers: { 200: { description: "the page", content: html }, 401: signedOut, 404: missingPage },
  },
  {
    method: "post",
    path: "/sessions/:id/delete",
    summary: "Delete my session (form: confirm = its id, csrf); its share links are revoked",
    auth: "library",
    params: session,
    answers: {
      303: seeOther("/"),
      400: { description: "the id typed is not the session's: the page again, nothing deleted", content: html },
      401: signedOut,
      404: missingPage,
    },
  },
  {
    method: "get",
    path: "/insights",
    summary:
      "Insights: charts and tables of where my tokens, money and time went (?team=: a team's, by member for its owner and admins)",
    auth: "library",
    query: InsightsQuery,
    answers: {
      200: { description: "the insights page", content: { type: "text/html" } },
      400: error("a malformed, reversed or over-long range", "bad_request", "bad_query"),
      404: error("?team= names no team of mine", "not_found"),
    },
  },
  {
    method: "get",
    path: "/insights.csv",
    summary: "Insights as CSV: one row per group of every breakdown",
    auth: "library",
    query: InsightsQuery,
    answers: {
      200: { description: "the report as CSV", content: { type: "text/csv" } },
      400: error("a malformed, reversed or over-long range", "bad_request", "bad_query"),
    },
  },
  {
    method: "get",
    path: "/shares",
    summary: "My share links: status, expiry, views, last viewed; the form to make one (?session= ?leaf=)",
    auth: "library",
    answers: { 200: { description: "the page", content: html }, 401: signedOut },
  },
  {
    method: "post",
    path: "/shares",
    summary: "Make a share link (form: session, expires in days, leaf, mask, csrf); its address is shown once",
    auth: "library",
    answers: {
      303: seeOther("/shares?created=<id>"),
      400: error("a form field is missing or not valid", "bad_request", "expiry_out_of_range"),
      401: signedOut,
      404: missingPage,
    },
  },
  {
    method: "post",
    path: "/shares/revoke-all",
    summary: "Revoke every live share link of mine (form: csrf)",
    auth: "library",
    answers: { 303: seeOther("/shares"), 401: signedOut },
  },
  {
    method: "post",
    path: "/shares/:id/revoke",
    summary: "Revoke one of my share links (form: csrf)",
    auth: "library",
    params: { id: SHARE_ID },
    answers: { 303: seeOther("/shares"), 401: signedOut, 404: missingPage },
  },
  {
    method: "get",
    path: "/teams",
    summary: "My teams, and a form to make one",
    auth: "library",
    answers: { 200: { description: "the page", content: html }, 401: signedOut },
  },
  {
    method: "post",
    path: "/teams",
    summary: "Make a team (form: name, csrf); I am its owner",
    auth: "library",
    answers: {
      303: seeOther("/teams/{team}"),
      ...libraryErrors,
      400: error("a missing or over-long name", "bad_request", "bad_body"),
    },
  },
  {
    method: "get",
    path: "/teams/:team",
    summary: "A team's sessions (?cursor=), a search of them (?q=), its members; an invite form for owners and admins",
    auth: "library",
    params: { team: TEAM_ID },
    answers: { 200: { description: "the page", content: html }, 401: signedOut, 404: missingTeam },
  },
  {
    method: "post",
    path: "/teams/:team/invites",
    summary: "Make an invite link (form: role, csrf): the team page, with the link to copy shown once",
    auth: "library",
    params: { team: TEAM_ID },
    answers: {
      200: { description: "the team page with the link", content: html },
      ...libraryErrors,
      403: error(
        "from another origin, without the CSRF token, or by a member who is not owner or admin",
        "csrf_rejected",
        "forbidden",
      ),
      404: missingTeam,
    },
  },
  {
    method: "get",
    path: "/teams/:team/audit",
    summary: "The team's audit log, newest first (?cursor=; owner or admin)",
    auth: "library",
    params: { team: TEAM_ID },
    answers: {
      200: { description: "the page", content: html },
      401: signedOut,
      403: error("a member who is not owner or admin", "forbidden"),
      404: missingTeam,
    },
  },
  {
    method: "get",
    path: "/teams/:team/sessions/:id",
    summary: "A team session in the share viewer, credentials masked ({id} or {owner}:{id})",
    auth: "library",
    params: { team: TEAM_ID, id: TEAM_SESSION_REF },
    query: SharePageQuery,
    answers: { 200: { description: "the page", content: html }, 401: signedOut, 404: missingTeam },
  },
  {
    method: "get",
    path: "/teams/:team/sessions/:id/entries",
    summary: "A window of a branch of a team session, rendered (the viewer's script)",
    auth: "library",
    params: { team: TEAM_ID, id: TEAM_SESSION_REF },
    query: SharePageQuery,
    answers: { 200: { description: "rendered entries", content: html }, 401: signedOut, 404: missingTeam },
  },
  {
    method: "get",
    path: "/teams/:team/sessions/:id/tree",
    summary: "The compact tree of a team session, for the viewer's navigator",
    auth: "library",
    params: { team: TEAM_ID, id: TEAM_SESSION_REF },
    answers: {
      200: { description: "ids, parents, kinds, previews, labels, times, leaf" },
      401: signedOut,
      404: missingTeam,
    },
  },
  {
    method: "get",
    path: "/teams/:team/sessions/:id/find",
    summary: "The tree's search over a team session's text (masked)",
    auth: "library",
    params: { team: TEAM_ID, id: TEAM_SESSION_REF },
    query: TreeFindQuery,
    answers: {
      200: { description: "a page of matches", content: json(TreeMatches) },
      401: signedOut,
      404: missingTeam,
    },
  },
  {
    method: "get",
    path: "/teams/:team/sessions/:id/state",
    summary: "Where a team session stands (the viewer's live updates)",
    auth: "library",
    params: { team: TEAM_ID, id: TEAM_SESSION_REF },
    answers: { 200: { description: "generation, bytes and leaf" }, 401: signedOut, 404: missingTeam },
  },
  {
    method: "get",
    path: "/join/:token",
    summary: "The team an invite names, and a Join button",
    auth: "library",
    params: { token: INVITE_TOKEN },
    answers: {
      200: { description: "the page", content: html },
      401: signedOut,
      404: error("unknown or used invite", "not_found"),
      410: error("expired invite", "gone"),
    },
  },
  {
    method: "post",
    path: "/join/:token",
    summary: "Join the team an invite names (form: csrf), spending the invite",
    auth: "library",
    params: { token: INVITE_TOKEN },
    answers: {
      303: seeOther("/teams/{team}"),
      ...libraryErrors,
      404: error("unknown or used invite", "not_found"),
      410: error("expired invite", "gone"),
    },
  },
  {
    method: "get",
    path: "/assets/library.css",
    summary: "The library's style sheet",
    auth: "none",
    answers: { 200: { description: "CSS", content: css } },
  },
  {
    method: "get",
    path: "/assets/library.js",
    summary: "The library's script",
    auth: "none",
    answers: { 200: { description: "JavaScript", content: js } },
  },
];

const team = { team: TEAM_ID };
const notMember = error("no such team, or not a member of it", "not_found");
const notAdmin = error("a member who is not the team's owner or an admin", "forbidden");

/** The team library: teams, invites, their sessions, members, policy and audit log. */
const TEAM_ROUTES: readonly RouteSpec[] = [
  {
    method: "post",
    path: "/v1/teams",
    summary: "Make a team; I am its owner",
    auth: "bearer",
    body: json(CreateTeam),
    answers: {
      201: { description: "the team", content: json(TeamView) },
      400: error("a bad name", "bad_json", "bad_body", "bad_request"),
    },
  },
  {
    method: "get",
    path: "/v1/teams",
    summary: "My teams and my role in each",
    auth: "bearer",
    answers: { 200: { description: "the teams", content: json(TeamList) } },
  },
  {
    method: "post",
    path: "/v1/teams/:team/invites",
    summary: "A one-time invite link (7 days) whose last path segment is its secret (owner or admin)",
    auth: "bearer",
    params: team,
    body: json(CreateInvite),
    answers: {
      201: { description: "the link", content: json(InviteLink) },
      400: error("a bad body", "bad_json", "bad_body"),
      403: notAdmin,
      404: notMember,
    },
  },
  {
    method: "post",
    path: "/v1/join/:token",
    summary: "Join the team an invite names, spending the invite",
    auth: "bearer",
    params: { token: INVITE_TOKEN },
    answers: {
      200: { description: "the team joined and my role", content: json(Joined) },
      404: error("unknown or already used invite", "not_found"),
      410: error("expired invite", "gone"),
    },
  },
  {
    method: "get",
    path: "/v1/teams/:team/sessions",
    summary: "The team's sessions, latest conversation first, a page at a time (members)",
    auth: "bearer",
    params: team,
    query: TeamPageQuery,
    answers: {
      200: { description: "a page and the cursor of the next", content: json(TeamSessionList) },
      400: error("a bad limit or cursor", "bad_query"),
      404: notMember,
    },
  },
  {
    method: "get",
    path: "/v1/teams/:team/sessions/:id/md",
    summary:
      "A team session's branch as Markdown, credentials masked as on share pages (members); {id} or {owner}:{id}",
    auth: "bearer",
    params: { ...team, id: TEAM_SESSION_REF },
    query: ContextQuery,
    answers: {
      200: { description: "the Markdown", content: markdown },
      404: error("no such team of mine, or no such session in it", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/teams/:team/sessions/:id/raw",
    summary:
      "A team session's JSONL, whole, credentials masked as on share pages (members; what `pisync pull --team` forks); {id} or {owner}:{id}",
    auth: "bearer",
    params: { ...team, id: TEAM_SESSION_REF },
    answers: {
      200: { description: "the JSONL", content: jsonl },
      404: error("no such team of mine, or no such session in it", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/teams/:team/members",
    summary: "The team's members and their roles (members)",
    auth: "bearer",
    params: team,
    answers: { 200: { description: "the members", content: json(MemberList) }, 404: notMember },
  },
  {
    method: "delete",
    path: "/v1/teams/:team/members/:user",
    summary: "Remove a member (owner or admin, or the member leaving); their sessions leave the team",
    auth: "bearer",
    params: { ...team, user: SAFE_ID },
    answers: {
      204: { description: "removed" },
      403: error("a plain member removing another, or anyone removing the owner", "forbidden"),
      404: error("no such team of mine, or no such member", "not_found"),
    },
  },
  {
    method: "put",
    path: "/v1/teams/:team/policy",
    summary:
      "Set the team's policy: publicLinks false stops new and earlier share links of its sessions (owner or admin)",
    auth: "bearer",
    params: team,
    body: json(TeamPolicy),
    answers: {
      200: { description: "the policy", content: json(TeamPolicy) },
      400: error("a bad body", "bad_json", "bad_body"),
      403: notAdmin,
      404: notMember,
    },
  },
  {
    method: "get",
    path: "/v1/teams/:team/audit",
    summary: "The team's audit log, newest first, a page at a time (owner or admin)",
    auth: "bearer",
    params: team,
    query: TeamPageQuery,
    answers: {
      200: { description: "a page and the cursor of the next", content: json(AuditList) },
      400: error("a bad limit or cursor", "bad_query"),
      403: notAdmin,
      404: notMember,
    },
  },
];

/** API v1 and the share pages, route by route. */
const API_ROUTES: readonly RouteSpec[] = [
  { method: "get", path: "/healthz", summary: "Liveness", auth: "none", answers: { 200: { description: "ok" } } },
  {
    method: "get",
    path: "/openapi.json",
    summary: "This description of the API",
    auth: "none",
    answers: { 200: { description: "an OpenAPI 3.1 document" } },
  },
  {
    method: "get",
    path: "/v1/search",
    summary:
      'Search my sessions (or ?team= my team\'s): words, "phrases", -exclude, prefix*, cwd: role: since: before: model: label: file:',
    auth: "bearer",
    query: SearchQuery,
    answers: {
      200: { description: "a page of sessions and the cursor of the next", content: json(SearchPage) },
      400: error("a malformed query, or one over the budget (32 words, 4 prefixes)", "bad_query"),
      404: error("?team= names no team of mine", "not_found"),
      503: error("the search passed its time limit, or too many were waiting (Retry-After)", "search_timeout"),
    },
  },
  {
    method: "get",
    path: "/v1/insights",
    summary:
      "Where my tokens, money and time went: by day, week, model, project, device and tool (?team=: a team's, by member for its owner and admins)",
    auth: "bearer",
    query: InsightsQuery,
    answers: {
      200: { description: "the report of the range", content: json(InsightsReport) },
      400: error("a malformed, reversed or over-long range", "bad_request", "bad_query"),
      404: error("?team= names no team of mine", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/sessions",
    summary: "My sessions, newest first",
    auth: "bearer",
    query: ListSessionsQuery,
    answers: { 200: { description: "a page and the cursor of the next", content: json(SessionList) } },
  },
  {
    method: "head",
    path: "/v1/sessions/:id",
    summary: "Committed length (Upload-Offset) and generation (ETag)",
    auth: "bearer",
    params: session,
    answers: { 200: { description: "Upload-Offset and ETag" }, 404: { description: "unknown" } },
  },
  {
    method: "get",
    path: "/v1/sessions/:id",
    summary: "Metadata, with the first problems; Upload-Offset and ETag as HEAD",
    auth: "bearer",
    params: session,
    answers: { 200: { description: "the metadata", content: json(SessionMeta) }, 404: missing },
  },
  {
    method: "patch",
    path: "/v1/sessions/:id",
    summary: "Append complete lines at Upload-Offset (a retry of committed bytes stores nothing)",
    auth: "bearer",
    params: session,
    headers: appendHeaders,
    body: jsonl,
    answers: { 200: { description: "appended, or a retry", content: json(AppendAnswer) }, ...appendErrors },
  },
  {
    method: "put",
    path: "/v1/sessions/:id",
    summary: "Start a new generation with these lines (from offset 0)",
    auth: "bearer",
    params: session,
    headers: appendHeaders.filter((h) => h.name !== HEADERS.uploadOffset),
    body: jsonl,
    answers: { 200: { description: "the new generation", content: json(AppendAnswer) }, ...appendErrors },
  },
  {
    method: "put",
    path: "/v1/sessions/:id/title",
    summary:
      "A rename: replace the title slot (the first line, oh-my-pi's fixed-width title) in place, in the same generation; every other byte stays",
    auth: "bearer",
    params: session,
    headers: [
      { name: "If-Match", description: 'the generation the client believes is current, as "3"' },
      { name: "Content-Encoding", description: "gzip, or none" },
    ],
    body: jsonl,
    answers: {
      200: { description: "renamed, or a retry", content: json(RenameAnswer) },
      400: error("not one title slot line", "not_a_title_slot", "invalid_if_match", "invalid_session_id", "bad_gzip"),
      404: missing,
      409: error(
        "the stored first line is not a title slot of the body's length: send the file as a new generation",
        "title_slot_mismatch",
      ),
      412: error("another generation is current (carries offset and generation)", "generation_mismatch"),
    },
  },
  {
    method: "delete",
    path: "/v1/sessions/:id",
    summary: "Delete every object and item of the session, and revoke its share links",
    auth: "bearer",
    params: session,
    headers: [
      { name: "Prefer", description: "return=representation: answer 200 with the receipt of what went instead of 204" },
    ],
    answers: {
      200: { description: "deleted: the receipt (asked for with Prefer)", content: json(DeleteReceipt) },
      204: { description: "deleted" },
      404: missing,
    },
  },
  {
    method: "post",
    path: "/v1/sessions/:id/uploads",
    summary:
      "A ticket and URL to PUT one large line to, of the declared length and SHA-256 (then PATCH with Pisync-Upload and an empty body)",
    auth: "bearer",
    params: session,
    body: json(CreateUpload),
    answers: {
      201: { description: "where to PUT the bytes", content: json(UploadTicket) },
      400: error("a bad length", "bad_json", "bad_body", "upload_too_large", "invalid_session_id"),
      429: error("the user's open uploads or their declared bytes at their bound", "too_many_uploads"),
    },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/raw",
    summary: "The exact bytes of a generation (Range answers 206; gzip when accepted)",
    auth: "bearer",
    params: session,
    query: RawQuery,
    answers: {
      200: { description: "the bytes", content: jsonl },
      206: { description: "the range", content: jsonl },
      404: error("no such session or generation", "not_found"),
      416: { description: "the range lies outside the bytes" },
    },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/tree",
    summary: "The entries: id, parentId, type, role, timestamp, label, preview",
    auth: "bearer",
    params: session,
    answers: { 200: { description: "the tree", content: json(Tree) }, 404: missing },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/md",
    summary: "My session's branch to ?leaf= (the default leaf without) as Markdown, unmasked",
    auth: "bearer",
    params: session,
    query: ContextQuery,
    answers: {
      200: { description: "the Markdown", content: markdown },
      404: error("no such session or entry", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/context",
    summary: "pi's context for ?leaf= (the default leaf without)",
    auth: "bearer",
    params: session,
    query: ContextQuery,
    answers: {
      200: { description: "the context", content: json(Context) },
      404: error("no such session or entry", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/page",
    summary:
      "One page (at most 64 KiB) of my session's branch to ?leaf= as Markdown (view=md) or of pi's context there (view=context), credentials masked; ?cursor= the next",
    auth: "bearer",
    params: session,
    query: ReadPageQuery,
    answers: {
      200: { description: "the page, and the cursor of the next", content: json(ReadPage) },
      400: error(
        "a malformed view or leaf, a cursor no page gave, or a session rewritten since",
        "bad_request",
        "bad_query",
      ),
      404: error("no such session or entry", "not_found"),
    },
  },
  {
    method: "get",
    path: "/v1/sessions/:id/generations",
    summary: "Generations, oldest first",
    auth: "bearer",
    params: session,
    answers: { 200: { description: "the generations", content: json(GenerationList) }, 404: missing },
  },
  {
    method: "post",
    path: "/v1/sessions/:id/shares",
    summary: "A share link: live and whole without leafId, one branch pinned with it",
    auth: "bearer",
    params: session,
    body: json(CreateShare),
    answers: {
      201: { description: "the share", content: json(ShareView) },
      400: error("a bad body or expiry", "bad_json", "bad_body", "expiry_out_of_range"),
      403: error("the session's team allows no public links", "team_policy"),
      404: error("no such session or entry", "not_found"),
    },
  },
  {
    method: "post",
    path: "/mcp",
    summary:
      "MCP (Model Context Protocol) over Streamable HTTP, stateless, JSON answers: the tools search_sessions, list_sessions, read_session, get_context",
    auth: "bearer",
    body: json(McpMessage),
    answers: {
      200: { description: "the JSON-RPC answer", content: json(McpMessage) },
      202: { description: "a notification, taken" },
      401: error("a missing or refused token", "unauthorized"),
      406: { description: "Accept names neither application/json nor text/event-stream" },
      413: { description: "a body over 64 KiB" },
    },
  },
  {
    method: "get",
    path: "/mcp",
    summary: "No server-sent stream: the MCP server is stateless (405)",
    auth: "bearer",
    answers: { 405: { description: "POST only" } },
  },
  {
    method: "delete",
    path: "/mcp",
    summary: "No MCP session to end: the server is stateless (405)",
    auth: "bearer",
    answers: { 405: { description: "POST only" } },
  },
  {
    method: "put",
    path: "/v1/sessions/:id/team",
    summary: "Put my session in one of my teams (readable by its members, read-only), or take it back with null",
    auth: "bearer",
    params: session,
    body: json(SetSessionTeam),
    answers: {
      200: { description: "where the session is now", content: json(SessionTeam) },
      400: error("a bad body", "bad_json", "bad_body"),
      404: error("no such session of mine, or no such team of mine", "not_found"),
    },
  },
  ...TEAM_ROUTES,
  {
    method: "get",
    path: "/v1/shares",
    summary: "My share links",
    auth: "bearer",
    answers: { 200: { description: "the shares", content: json(ShareList) } },
  },
  {
    method: "delete",
    path: "/v1/shares/:id",
    summary: "Revoke a share link (effective on its next request)",
    auth: "bearer",
    params: { id: SHARE_ID },
    answers: { 204: { description: "revoked" }, 404: error("no such share", "not_found") },
  },
  {
    method: "head",
    path: "/v1/blobs/:hash",
    summary: "Whether I hold the blob",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    answers: { 200: { description: "held" }, 404: { description: "not held" } },
  },
  {
    method: "get",
    path: "/v1/blobs/:hash",
    summary: "A content-addressed blob (oh-my-pi's images)",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    answers: {
      200: { description: "the bytes", content: bytes },
      400: error("not a SHA-256", "invalid_blob_name"),
      404: error("not held", "not_found"),
    },
  },
  {
    method: "put",
    path: "/v1/blobs/:hash",
    summary: "Store a blob under the SHA-256 of its bytes",
    auth: "bearer",
    params: { hash: SHA256_HEX },
    body: bytes,
    answers: {
      204: { description: "stored" },
      400: error("a bad name or body", "invalid_blob_name", "blob_hash_mismatch", "bad_gzip", "unsupported_encoding"),
      413: error("over the request limit", "too_large"),
    },
  },
  {
    method: "put",
    path: "/v1/uploads/:uploadId",
    summary: "The bytes of one large line (where the store has no presigned URL)",
    auth: "bearer",
    params: { uploadId: UPLOAD_ID },
    body: jsonl,
    answers: {
      204: { description: "stored" },
      400: error(
        "not an upload id, or bytes not the ticket's length or SHA-256 (nothing kept)",
        "invalid_upload_id",
        "upload_mismatch",
      ),
      404: error("no ticket of this user for this upload, or past its time", "not_found"),
      413: error("over the ticket's length", "too_large"),
      415: error("a compressed body (Content-Encoding): uploads are sent as they are", "upload_encoding"),
    },
  },
  {
    method: "get",
    path: "/v1/whoami",
    summary: "Who I am here: my account, this token's device, and the id of this server's data",
    auth: "bearer",
    answers: { 200: { description: "the identity", content: json(Whoami) } },
  },
  {
    method: "get",
    path: "/v1/tokens",
    summary: "My tokens (never their secrets)",
    auth: "bearer",
    answers: { 200: { description: "the tokens", content: json(TokenList) } },
  },
  {
    method: "post",
    path: "/v1/tokens",
    summary: "A new token for me, shown once",
    auth: "bearer",
    body: json(CreateToken),
    answers: {
      201: { description: "the token", content: json(CreatedToken) },
      400: error("a bad name", "bad_json", "bad_body"),
      429: error("the user's live tokens at their bound: revoke one first", "too_many_tokens"),
    },
  },
  {
    method: "patch",
    path: "/v1/tokens/:id",
    summary: "Rename a token",
    auth: "bearer",
    params: { id: DEVICE_ID },
    body: json(CreateToken),
    answers: {
      200: { description: "renamed", content: json(RenamedToken) },
      400: error("a bad name", "bad_json", "bad_body"),
      404: error("no such token", "not_found"),
    },
  },
  {
    method: "post",
    path: "/v1/device/code",
    summary:
      "Start signing this machine in from a browser (RFC 8628): a code to show, a page to open, a device code to poll with",
    auth: "none",
    body: json(StartDeviceCode),
    answers: {
      200: { description: "the codes", content: json(DeviceCode) },
      400: error("a bad body", "bad_json", "bad_body"),
    },
  },
  {
    method: "post",
    path: "/v1/device/token",
    summary: "Poll a device code: the new token once approved on /device (once), else why not yet",
    auth: "none",
    body: json(PollDeviceCode),
    answers: {
      200: { description: "approved: the machine's new token, shown this once", content: json(DeviceToken) },
      400: error(
        "not yet, too soon, denied, or expired/used/unknown",
        "authorization_pending",
        "slow_down",
        "access_denied",
        "expired_token",
        "bad_json",
        "bad_body",
      ),
    },
  },
  {
    method: "delete",
    path: "/v1/tokens/:id",
    summary: "Revoke a token",
    auth: "bearer",
    answers: { 204: { description: "revoked" }, 404: error("no such token", "not_found") },
  },
  {
    method: "post",
    path: "/v1/login-links",
    summary: "A one-time sign-in link for a browser (valid 60 s, once), landing on `next`",
    auth: "bearer",
    body: json(CreateLoginLink),
    answers: {
      201: { description: "the link", content: json(LoginLink) },
      400: error("a bad body or next", "bad_json", "bad_body", "invalid_next"),
    },
  },
  {
    method: "get",
    path: "/login/:secret",
    summary: "Redeem a sign-in link: sets the HttpOnly, SameSite=Strict session cookie and redirects (303) to its next",
    auth: "link",
    params: { secret: LOGIN_SECRET },
    answers: {
      200: {
        description:
          "opened from another site's page (Sec-Fetch-Site: cross-site or same-site): nothing is signed in (login CSRF); a page asks to confirm with POST /login/:secret",
        content: html,
      },
      303: { description: "signed in; Set-Cookie pisync_session and Location" },
      404: { description: "unknown or already used (a page for a browser)", content: html },
      410: { description: "expired (a page for a browser)", content: html },
    },
  },
  {
    method: "post",
    path: "/login/:secret",
    summary: "Confirm a sign-in link opened from another site's page (the button of its page, from this origin only)",
    auth: "link",
    params: { secret: LOGIN_SECRET },
    answers: {
      303: { description: "signed in; Set-Cookie pisync_session and Location" },
      403: error("not posted from this server's page (Origin)", "csrf_rejected"),
      404: { description: "unknown or already used (a page for a browser)", content: html },
      410: { description: "expired (a page for a browser)", content: html },
    },
  },
  {
    method: "post",
    path: "/logout",
    summary: "Sign this browser out",
    auth: "library",
    body: form,
    answers: { 303: { description: "signed out; to /" }, ...libraryErrors },
  },
  {
    method: "post",
    path: "/logout-all",
    summary: "Sign out every browser session of mine (tokens stay)",
    auth: "library",
    body: form,
    answers: { 303: { description: "signed out everywhere; to /" }, ...libraryErrors },
  },
  {
    method: "get",
    path: "/devices",
    summary: "My tokens and browser sessions, with their last use (a page)",
    auth: "library",
    answers: { 200: { description: "the page", content: html }, 401: libraryErrors[401] },
  },
  {
    method: "post",
    path: "/devices/tokens",
    summary: "Make a token for another machine (form: csrf, name): the page shows it once",
    auth: "library",
    body: form,
    answers: {
      200: { description: "the devices page with the new token, shown once", content: html },
      ...libraryErrors,
    },
  },
  {
    method: "post",
    path: "/devices/tokens/:id/rename",
    summary: "Rename one of my tokens (form: csrf, name)",
    auth: "library",
    params: { id: DEVICE_ID },
    body: form,
    answers: {
      303: { description: "renamed; back to /devices" },
      ...libraryErrors,
      400: error("a missing or bad name", "bad_request"),
      404: error("no such token", "not_found"),
    },
  },
  {
    method: "get",
    path: "/device",
    summary: "Sign a machine in: type the code `pisync login` shows (?code= fills it), then approve or deny",
    auth: "library",
    answers: {
      200: { description: "the code form, or the code's machine to approve", content: html },
      401: libraryErrors[401],
      404: { description: "no such code waiting (unknown, expired or used): the form again", content: html },
      429: { description: "too many unknown codes from this user: the form again, with Retry-After", content: html },
    },
  },
  {
    method: "post",
    path: "/device/approve",
    summary: "Approve a code (form: csrf, code): the machine's next poll gets a token of mine named after it",
    auth: "library",
    body: form,
    answers: {
      200: { description: "approved", content: html },
      ...libraryErrors,
      404: { description: "no such code waiting", content: html },
      429: { description: "too many unknown codes", content: html },
    },
  },
  {
    method: "post",
    path: "/device/deny",
    summary: "Deny a code (form: csrf, code): the machine's next poll gets access_denied",
    auth: "library",
    body: form,
    answers: {
      200: { description: "denied", content: html },
      ...libraryErrors,
      404: { description: "no such code waiting", content: html },
      429: { description: "too many unknown codes", content: html },
    },
  },
  {
    method: "post",
    path: "/devices/tokens/:id/revoke",
    summary: "Revoke one of my tokens",
    auth: "library",
    params: { id: DEVICE_ID },
    body: form,
    answers: {
      303: { description: "revoked; back to /devices" },
      ...libraryErrors,
      404: error("no such token", "not_found"),
    },
  },
  {
    method: "post",
    path: "/devices/sessions/:id/revoke",
    summary: "Sign out one of my browser sessions",
    auth: "library",
    params: { id: DEVICE_ID },
    body: form,
    answers: {
      303: { description: "signed out; back to /devices (to / for this browser)" },
      ...libraryErrors,
      404: error("no such browser session", "not_found"),
    },
  },
  {
    method: "get",
    path: "/s/assets/style.css",
    summary: "The share page's style sheet",
    auth: "none",
    answers: { 200: { description: "CSS", content: { type: "text/css" } } },
  },
  {
    method: "get",
    path: "/s/assets/app.js",
    summary: "The share page's script",
    auth: "none",
    answers: { 200: { description: "JavaScript", content: { type: "text/javascript" } } },
  },
  {
    method: "get",
    path: "/s/:token",
    summary: "A shared conversation's page (?leaf= another branch of a whole share, ?before= earlier entries)",
    auth: "link",
    params: link,
    query: SharePageQuery,
    answers: { 200: { description: "the page", content: html }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/state",
    summary:
      "The shared conversation's tip and size, for a live page (ETag); a whole share's header counts too (facts)",
    auth: "link",
    params: link,
    query: ShareAfterQuery,
    answers: { 200: { description: "the state" }, 304: { description: "unchanged" }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/entries",
    summary: "A window of a branch (?before=, ?from=) or the entries after ?after= (live), rendered",
    auth: "link",
    params: link,
    query: SharePageQuery,
    answers: { 200: { description: "rendered entries", content: html }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/tree",
    summary: "The compact tree of a whole share (parallel arrays, masked), for the page's navigator",
    auth: "link",
    params: link,
    query: SharePageQuery,
    answers: { 200: { description: "ids, parents, kinds, previews, labels, times, leaf" }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/raw",
    summary: "The shared JSONL (masked unless the share says not)",
    auth: "link",
    params: link,
    answers: { 200: { description: "the JSONL", content: jsonl }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/blobs/:hash",
    summary:
      "An image the shared session names, kept as a blob (oh-my-pi's blob:sha256:): no other blob of its owner, raster types only",
    auth: "link",
    params: { ...link, hash: SHA256_HEX },
    answers: { 200: { description: "the image (PNG, JPEG, GIF or WebP)", content: bytes }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/context",
    summary: "The shared conversation's context as JSON",
    auth: "link",
    params: link,
    query: SharePageQuery,
    answers: { 200: { description: "the context", content: json(Context) }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/md",
    summary:
      "The shared branch as Markdown (?leaf= another branch of a whole share), masked like the page; the page answers the same to Accept: text/markdown",
    auth: "link",
    params: link,
    query: SharePageQuery,
    answers: { 200: { description: "the Markdown", content: markdown }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/find",
    summary: "The tree's search over the whole text of every entry (masked), a page of matches at a time",
    auth: "link",
    params: link,
    query: TreeFindQuery,
    answers: { 200: { description: "positions in the tree", content: json(TreeMatches) }, ...linkErrors },
  },
  {
    method: "get",
    path: "/s/:token/preview.png",
    summary: "The link's preview image (1200×630: title, model, turns, cost, the start of the conversation), masked",
    auth: "link",
    params: link,
    answers: {
      200: { description: "the image; a revoked or expired link's says so", content: { type: "image/png" } },
      404: linkErrors[404],
    },
  },
  ...LIBRARY_ROUTES,
];

/** API v1 and the share pages, route by route, with the answers storage failures give. */
export const ROUTES: readonly RouteSpec[] = API_ROUTES.map(withStorageAnswers);

/**
 * Every route that reaches the store (all but a few static ones) may answer 503 when the store
 * does not answer in time; every change may answer 507 when it is full. Both carry Retry-After.
 */
function withStorageAnswers(route: RouteSpec): RouteSpec {
  if (route.auth === "none" && route.method === "get") return route;
  const answers = { ...route.answers };
  const busy = answers[503];
  answers[503] = busy?.codes?.includes("storage_unavailable")
    ? busy
    : error(
        "the storage did not answer in time: retry after Retry-After",
        ...(busy?.codes ?? []),
        "storage_unavailable",
      );
  if (route.method !== "get" && route.method !== "head") {
    answers[507] = error("the storage is full: nothing was written; retry after Retry-After", "storage_full");
  }
  return { ...route, answers };
}
