import { DEVICE_ID } from "../ids.js";
import {
  CreatedToken,
  CreateLoginLink,
  CreateToken,
  DeviceCode,
  DeviceToken,
  LoginLink,
  PollDeviceCode,
  RenamedToken,
  StartDeviceCode,
  TokenList,
  Whoami,
} from "../schemas.js";
import { error, json, type RouteSpec } from "./common.js";

/** Who one is, tokens, device sign-in and sign-in links. */
export const CREDENTIALS_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/v1/whoami",
    summary: "Who I am here: my account, this token's device, and the id of this server's data",
    auth: "bearer",
    responses: { 200: { description: "the identity", content: json(Whoami) } },
  },
  {
    method: "get",
    path: "/v1/tokens",
    summary: "My tokens (never their secrets)",
    auth: "bearer",
    responses: { 200: { description: "the tokens", content: json(TokenList) } },
  },
  {
    method: "post",
    path: "/v1/tokens",
    summary: "A new token for me, shown once",
    auth: "bearer",
    body: json(CreateToken),
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: { 204: { description: "revoked" }, 404: error("no such token", "not_found") },
  },
  {
    method: "post",
    path: "/v1/login-links",
    summary: "A one-time sign-in link for a browser (valid 60 s, once), landing on `next`",
    auth: "bearer",
    body: json(CreateLoginLink),
    responses: {
      201: { description: "the link", content: json(LoginLink) },
      400: error("a bad body or next", "bad_json", "bad_body", "invalid_next"),
    },
  },
];
