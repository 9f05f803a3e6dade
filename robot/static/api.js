// robotd's HTTP API seen from the page: relative URLs, readable errors, the API key.
//
// Every URL is relative to the page so the dashboard also works behind a
// reverse proxy under a sub-path. When an action answers 401, the user is
// asked for the key once; it is kept in localStorage and sent as X-Api-Key.
// Every request carries X-Robotd: robotd refuses a request that changes
// something without it, as no form posted by another web page can have it.

const KEY_STORE = "robotd.apiKey";

export class ApiError extends Error {
  constructor(message, status = 0) {
    super(message);
    this.status = status;
  }
}

let askForKey = null;
let clockSample = null;

function noteClock(response) {
  const date = Date.parse(response.headers.get("Date") || "");
  if (!Number.isNaN(date)) clockSample = {server: date / 1000 + 0.5, local: Date.now() / 1000};
}

/** The server's clock as seen in the last response's Date header (1 s resolution), or null. */
export function lastClockSample() {
  return clockSample;
}

/** Install the function that asks the user for the API key (returns the key, or null when cancelled). */
export function setKeyPrompt(prompt) {
  askForKey = prompt;
}

function storedKey() {
  try {
    return localStorage.getItem(KEY_STORE);
  } catch {
    return null; // storage blocked (private mode): ask each time
  }
}

function storeKey(key) {
  try {
    if (key) localStorage.setItem(KEY_STORE, key);
    else localStorage.removeItem(KEY_STORE);
  } catch {
    /* storage blocked: the key lives for this request only */
  }
}

/** The readable message of a failed response: the API's `detail`, never a JSON dump. */
export async function errorMessage(response) {
  let detail = null;
  try {
    detail = (await response.json()).detail;
  } catch {
    /* not JSON (a proxy's error page, for example) */
  }
  if (Array.isArray(detail)) {
    detail = detail.map((item) => (item && item.msg) || String(item)).join("; ");
  }
  if (typeof detail !== "string" || !detail) {
    detail = `robotd answered ${response.status}${response.statusText ? " " + response.statusText : ""}`;
  }
  return detail;
}

async function send(path, method, body, key, timeoutMs) {
  const headers = {Accept: "application/json", "X-Robotd": "1"};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (key) headers["X-Api-Key"] = key;
  try {
    return await fetch(path, {method, headers, body: body === undefined ? undefined : JSON.stringify(body),
                              cache: "no-store", signal: timeoutMs ? AbortSignal.timeout(timeoutMs) : undefined});
  } catch (error) {
    if (error.name === "TimeoutError") throw new ApiError(`no answer within ${timeoutMs / 1000} s`);
    throw new ApiError("cannot reach robotd (network error): is it running and is this device on its network?");
  }
}

/**
 * Call the API and return the parsed JSON body; throws ApiError with a readable message (status 0: no
 * answer at all). `path` is relative ("api/status"). A 401 asks for the key and retries once.
 */
export async function api(path, {method = "GET", body, timeoutMs = 0} = {}) {
  let key = storedKey();
  let response = await send(path, method, body, key, timeoutMs);
  if (response.status === 401 && askForKey) {
    const reason = await errorMessage(response);
    const entered = await askForKey(key ? `The saved key was not accepted. ${reason}` : reason);
    if (!entered) throw new ApiError("cancelled: this action needs the API key", 401);
    key = entered;
    response = await send(path, method, body, key, timeoutMs);
    storeKey(response.status === 401 ? null : key);
  }
  if (!response.ok) throw new ApiError(await errorMessage(response), response.status);
  noteClock(response);
  return response.status === 204 ? null : response.json();
}

/** Forget the saved key (the next protected action asks again). */
export function forgetKey() {
  storeKey(null);
}
