import { DEVICE_ID } from "../ids.js";
import { error, form, html, libraryErrors, type RouteSpec } from "./common.js";

/** The devices page: tokens and browser sessions, device sign-in approval. */
export const DEVICES_ROUTES: readonly RouteSpec[] = [
  {
    method: "get",
    path: "/devices",
    summary: "My tokens and browser sessions, with their last use (a page)",
    auth: "library",
    responses: { 200: { description: "the page", content: html }, 401: libraryErrors[401] },
  },
  {
    method: "post",
    path: "/devices/tokens",
    summary: "Make a token for another machine (form: csrf, name): the page shows it once",
    auth: "library",
    body: form,
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
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
    responses: {
      303: { description: "signed out; back to /devices (to / for this browser)" },
      ...libraryErrors,
      404: error("no such browser session", "not_found"),
    },
  },
];
