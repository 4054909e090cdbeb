// The JSON API (docs/web.md): every request to /api/ carries the page's key in its
// Authorization header; errors become ApiError with the server's kind and message.

import { token } from "./token.js";

let unauthorized = () => {};
/** What to do when the server refuses the key (401): app.js says so on the page. */
export function onUnauthorized(fn) {
  unauthorized = fn;
}

export class ApiError extends Error {
  constructor(status, kind, message, data) {
    super(message);
    this.status = status;
    this.kind = kind;
    this.data = data;
  }
}

export async function api(method, path, body) {
  const headers = { Authorization: `Bearer ${token()}`, Accept: "application/json" };
  const init = { method, headers, credentials: "omit", cache: "no-store" };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let response;
  try {
    response = await fetch(`/api/${path}`, init);
  } catch (err) {
    throw new ApiError(0, "unavailable", "memdir ui is not answering (was it stopped?)", null);
  }
  let data = null;
  try {
    data = await response.json();
  } catch (err) {
    data = null;
  }
  if (!response.ok) {
    const error = (data && data.error) || {};
    if (response.status === 401) unauthorized();
    throw new ApiError(
      response.status,
      error.kind || String(response.status),
      error.message || `the request failed (${response.status})`,
      data,
    );
  }
  return data;
}
export const qs = (params) => {
  const out = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) out.set(k, v);
  const text = out.toString();
  return text ? `?${text}` : "";
};
