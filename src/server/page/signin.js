// Sign-in with the organisation's identity provider, when `serve` offers it (`auth/config`):
// authorization code with PKCE. The page sends the person to the provider's login with a
// challenge and a random state, and on the way back redeems the code through `auth/token` on
// its own origin (the provider is never called from here). Tokens stay in this tab's
// sessionStorage under the page's credential and are refreshed a minute before they expire.
// Loaded before app.js, whose `credential`, `CREDENTIAL_KEY`, `setStatus` and `showWho` it uses.
"use strict";

const SIGN_IN_PENDING_KEY = "crowdvision.signin";
const REFRESH_MARGIN_MS = 60 * 1000;
// After the provider could not be reached, the next refresh attempt.
const REFRESH_RETRY_MS = 15 * 1000;

const signIn = { offered: null, timer: null };

function base64Url(bytes) {
  let binary = "";
  bytes.forEach((b) => (binary += String.fromCharCode(b)));
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

function randomText(byteCount) {
  const bytes = new Uint8Array(byteCount);
  crypto.getRandomValues(bytes);
  return base64Url(bytes);
}

async function challengeFor(verifier) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier));
  return base64Url(new Uint8Array(digest));
}

// Where the provider sends the person back: this page, without its query.
function returnAddress() {
  return location.origin + location.pathname;
}

function signedIn() {
  const given = credential();
  return Boolean(given && given.signedIn);
}

// Reads whether the server offers sign-in, and shows the buttons that fit.
async function loadSignIn() {
  try {
    const response = await fetch("auth/config");
    if (response.ok) signIn.offered = (await response.json()).sign_in;
    else setStatus("Sign-in is not available right now (" + response.status + ").");
  } catch (_) {
    signIn.offered = null;
  }
  showSignInButtons();
}

function showSignInButtons() {
  $("signin").hidden = !signIn.offered || signedIn();
  $("signout").hidden = !signedIn();
}

async function beginSignIn() {
  if (!signIn.offered) return;
  const verifier = randomText(32);
  const pending = {
    state: randomText(16),
    verifier,
    redirectUri: returnAddress(),
    returnTo: location.search,
  };
  sessionStorage.setItem(SIGN_IN_PENDING_KEY, JSON.stringify(pending));
  const url = new URL(signIn.offered.authorize_url);
  url.searchParams.set("response_type", "code");
  url.searchParams.set("client_id", signIn.offered.client_id);
  url.searchParams.set("redirect_uri", pending.redirectUri);
  url.searchParams.set("scope", signIn.offered.scopes);
  url.searchParams.set("state", pending.state);
  url.searchParams.set("code_challenge", await challengeFor(verifier));
  url.searchParams.set("code_challenge_method", "S256");
  location.assign(url.toString());
}

// The provider sent the person back (`?code=…&state=…`, or `?error=…`): redeem the code, and
// put back the address the sign-in started from (the conversation it showed).
async function finishSignIn() {
  const params = new URLSearchParams(location.search);
  if (!params.has("state") || !(params.has("code") || params.has("error"))) return;
  let pending = null;
  try {
    pending = JSON.parse(sessionStorage.getItem(SIGN_IN_PENDING_KEY) || "null");
  } catch (_) {
    pending = null;
  }
  sessionStorage.removeItem(SIGN_IN_PENDING_KEY);
  history.replaceState(null, "", location.pathname + (pending ? pending.returnTo : ""));
  if (!pending || pending.state !== params.get("state")) {
    setStatus("That sign-in was not started from this tab; sign in again.");
    return;
  }
  if (params.has("error")) {
    setStatus("The sign-in was cancelled or refused; sign in again.");
    return;
  }
  const tokens = await redeem({
    grant_type: "authorization_code",
    code: params.get("code"),
    code_verifier: pending.verifier,
    redirect_uri: pending.redirectUri,
  });
  if (tokens.ok) keepTokens(tokens.value, null);
  else setStatus(tokens.message);
}

// `{ok, value}` with the tokens, or `{ok: false, refused, message}`.
async function redeem(grant) {
  try {
    const response = await fetch("auth/token", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify(grant),
    });
    if (response.ok) return { ok: true, value: await response.json() };
    const refused = response.status === 400;
    return {
      ok: false,
      refused,
      message: refused
        ? "The sign-in was not accepted; sign in again."
        : "The sign-in service cannot be reached right now; try again shortly.",
    };
  } catch (_) {
    return { ok: false, refused: false, message: "The agent cannot be reached." };
  }
}

function keepTokens(tokens, earlierRefresh) {
  const expiresAt = tokens.expires_in ? Date.now() + tokens.expires_in * 1000 : null;
  const kept = {
    kind: "bearer",
    value: tokens.access_token,
    refresh: tokens.refresh_token || earlierRefresh,
    expiresAt,
    signedIn: true,
  };
  sessionStorage.setItem(CREDENTIAL_KEY, JSON.stringify(kept));
  scheduleRefresh();
  showSignInButtons();
}

function scheduleRefresh(wait) {
  clearTimeout(signIn.timer);
  const given = credential();
  if (!given || !given.signedIn || !given.expiresAt) return;
  const due = given.expiresAt - REFRESH_MARGIN_MS - Date.now();
  signIn.timer = setTimeout(refreshNow, wait === undefined ? Math.max(0, due) : wait);
}

// Refreshes the access token now; true while the person stays signed in.
async function refreshNow() {
  const given = credential();
  if (!given || !given.signedIn) return false;
  const expired = given.expiresAt && given.expiresAt <= Date.now();
  if (!given.refresh) {
    if (expired) signOut("Your sign-in has expired; sign in again.");
    return !expired;
  }
  const tokens = await redeem({ grant_type: "refresh_token", refresh_token: given.refresh });
  if (tokens.ok) {
    keepTokens(tokens.value, given.refresh);
    return true;
  }
  if (tokens.refused || expired) {
    signOut("Your sign-in has ended; sign in again.");
    return false;
  }
  scheduleRefresh(REFRESH_RETRY_MS);
  return true;
}

// At start: a token that expires within the margin is refreshed before anything is asked.
async function refreshIfDue() {
  const given = credential();
  if (!given || !given.signedIn) return;
  if (given.expiresAt && given.expiresAt - REFRESH_MARGIN_MS <= Date.now()) await refreshNow();
  else scheduleRefresh();
}

function signOut(message) {
  clearTimeout(signIn.timer);
  sessionStorage.removeItem(CREDENTIAL_KEY);
  showSignInButtons();
  if (message) setStatus(message);
  showWho();
}

function setUpSignIn() {
  $("signin").addEventListener("click", beginSignIn);
  $("signout").addEventListener("click", () => signOut("Signed out."));
  // Timers stop while a laptop sleeps: coming back, a token due for refresh is refreshed now.
  document.addEventListener("visibilitychange", () => {
    if (document.visibilityState === "visible") refreshIfDue();
  });
}
