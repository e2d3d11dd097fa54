import { INVITE_TOKEN, SAFE_ID, TEAM_ID, TEAM_SESSION_REF } from "../ids.js";
import {
  AuditList,
  ContextQuery,
  CreateInvite,
  CreateTeam,
  InviteLink,
  Joined,
  MemberList,
  SessionTeam,
  SetSessionTeam,
  TeamList,
  TeamPageQuery,
  TeamPolicy,
  TeamSessionList,
  TeamView,
} from "../schemas.js";
import { error, json, jsonl, markdown, type RouteSpec, session } from "./common.js";

const team = { team: TEAM_ID };
const notMember = error("no such team, or not a member of it", "not_found");
const notAdmin = error("a member who is not the team's owner or an admin", "forbidden");

/** The team library: teams, invites, their sessions, members, policy and audit log. */
export const TEAM_ROUTES: readonly RouteSpec[] = [
  {
    method: "post",
    path: "/v1/teams",
    summary: "Make a team; I am its owner",
    auth: "bearer",
    body: json(CreateTeam),
    responses: {
      201: { description: "the team", content: json(TeamView) },
      400: error("a bad name", "bad_json", "bad_body", "bad_request"),
    },
  },
  {
    method: "get",
    path: "/v1/teams",
    summary: "My teams and my role in each",
    auth: "bearer",
    responses: { 200: { description: "the teams", content: json(TeamList) } },
  },
  {
    method: "post",
    path: "/v1/teams/:team/invites",
    summary: "A one-time invite link (7 days) whose last path segment is its secret (owner or admin)",
    auth: "bearer",
    params: team,
    body: json(CreateInvite),
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: { 200: { description: "the members", content: json(MemberList) }, 404: notMember },
  },
  {
    method: "delete",
    path: "/v1/teams/:team/members/:user",
    summary: "Remove a member (owner or admin, or the member leaving); their sessions leave the team",
    auth: "bearer",
    params: { ...team, user: SAFE_ID },
    responses: {
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
    responses: {
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
    responses: {
      200: { description: "a page and the cursor of the next", content: json(AuditList) },
      400: error("a bad limit or cursor", "bad_query"),
      403: notAdmin,
      404: notMember,
    },
  },
];

/** The team library: putting a session in a team, teams, invites, their sessions, members, policy and audit log. */
export const TEAMS_ROUTES: readonly RouteSpec[] = [
  {
    method: "put",
    path: "/v1/sessions/:id/team",
    summary: "Put my session in one of my teams (readable by its members, read-only), or take it back with null",
    auth: "bearer",
    params: session,
    body: json(SetSessionTeam),
    responses: {
      200: { description: "where the session is now", content: json(SessionTeam) },
      400: error("a bad body", "bad_json", "bad_body"),
      404: error("no such session of mine, or no such team of mine", "not_found"),
    },
  },
  ...TEAM_ROUTES,
];
