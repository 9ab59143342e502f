//! The test identity provider's sign-in half, for a public client using authorization code with
//! PKCE: a login page at `/authorize` (a user name, no password), `/login` sending the browser
//! back with a one-time code, and `/token` redeeming that code (S256 verifier, same client and
//! redirect address) or a refresh token (reusable, as most providers allow) for an RS256 access
//! token of this issuer. Access tokens live as long as [`Logins::set_lifetime`] says, so that a
//! test sees the page refresh them.

use crate::oidc::{now, sign, AUDIENCE};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Json, Router};
use base64::Engine;
use serde_json::json;
use sha2::Digest;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// The page's client id at this provider.
pub const PAGE_CLIENT: &str = "crowdvision-page";

struct Issued {
    sub: String,
    challenge: String,
    redirect_uri: String,
}

#[derive(Default)]
struct Book {
    codes: HashMap<String, Issued>,
    refresh_tokens: HashMap<String, String>,
    redeemed_codes: usize,
    refreshes: usize,
    lifetime_s: i64,
}

/// What the provider has handed out, shared with the test.
#[derive(Clone)]
pub struct Logins {
    issuer: String,
    book: Arc<Mutex<Book>>,
}

impl Logins {
    /// Seconds the next access tokens live.
    pub fn set_lifetime(&self, seconds: i64) {
        self.book.lock().unwrap().lifetime_s = seconds;
    }

    pub fn redeemed_codes(&self) -> usize {
        self.book.lock().unwrap().redeemed_codes
    }

    pub fn refreshes(&self) -> usize {
        self.book.lock().unwrap().refreshes
    }
}

/// The routes, for the provider at `issuer`.
pub fn routes(issuer: String) -> (Router, Logins) {
    let logins = Logins {
        issuer,
        book: Arc::new(Mutex::new(Book {
            lifetime_s: 600,
            ..Book::default()
        })),
    };
    let router = Router::new()
        .route("/authorize", get(login_page))
        .route("/login", post(log_in))
        .route("/token", post(token))
        .with_state(logins.clone());
    (router, logins)
}

/// Memberships by user name: pat administers Acme, kim is an Acme customer.
fn memberships(sub: &str) -> serde_json::Value {
    match sub {
        "pat" => json!([{"domain": "acme", "role": "business_admin"}]),
        "kim" => json!([{"domain": "acme", "role": "standard_customer"}]),
        _ => json!([{"domain": "globex", "role": "business_staff"}]),
    }
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('"', "&quot;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

async fn login_page(Query(query): Query<HashMap<String, String>>) -> Response {
    let get = |name: &str| query.get(name).cloned().unwrap_or_default();
    if get("response_type") != "code"
        || get("client_id") != PAGE_CLIENT
        || get("code_challenge_method") != "S256"
        || get("code_challenge").len() < 43
        || get("state").is_empty()
    {
        return (StatusCode::BAD_REQUEST, "not a PKCE authorization request").into_response();
    }
    let hidden: String = ["redirect_uri", "state", "code_challenge"]
        .iter()
        .map(|name| {
            format!(
                r#"<input type="hidden" name="{name}" value="{}">"#,
                escape(&get(name))
            )
        })
        .collect();
    Html(format!(
        r#"<!doctype html><html lang="en"><title>Test identity provider</title>
<form method="post" action="/login">{hidden}
<label>User name <input id="username" name="username" autocomplete="off"></label>
<button id="sign-in" type="submit">Sign in</button></form></html>"#
    ))
    .into_response()
}

async fn log_in(
    State(logins): State<Logins>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let get = |name: &str| form.get(name).cloned().unwrap_or_default();
    let code = hex::encode(rand::random::<[u8; 16]>());
    let redirect_uri = get("redirect_uri");
    let mut back = url::Url::parse(&redirect_uri).unwrap();
    back.query_pairs_mut()
        .append_pair("code", &code)
        .append_pair("state", &get("state"));
    logins.book.lock().unwrap().codes.insert(
        code,
        Issued {
            sub: get("username"),
            challenge: get("code_challenge"),
            redirect_uri,
        },
    );
    Redirect::to(back.as_str()).into_response()
}

fn refused(error: &str) -> Response {
    (
        StatusCode::BAD_REQUEST,
        Json(json!({"error": error, "error_description": "secret detail from the provider"})),
    )
        .into_response()
}

async fn token(
    State(logins): State<Logins>,
    Form(form): Form<HashMap<String, String>>,
) -> Response {
    let get = |name: &str| form.get(name).cloned().unwrap_or_default();
    if get("client_id") != PAGE_CLIENT {
        return refused("invalid_client");
    }
    let mut book = logins.book.lock().unwrap();
    let sub = match get("grant_type").as_str() {
        "authorization_code" => {
            let Some(issued) = book.codes.remove(&get("code")) else {
                return refused("invalid_grant");
            };
            let digest = sha2::Sha256::digest(get("code_verifier").as_bytes());
            let challenge = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(digest);
            if challenge != issued.challenge || get("redirect_uri") != issued.redirect_uri {
                return refused("invalid_grant");
            }
            book.redeemed_codes += 1;
            issued.sub
        }
        "refresh_token" => {
            let Some(sub) = book.refresh_tokens.get(&get("refresh_token")).cloned() else {
                return refused("invalid_grant");
            };
            book.refreshes += 1;
            sub
        }
        _ => return refused("unsupported_grant_type"),
    };
    let refresh_token = hex::encode(rand::random::<[u8; 16]>());
    book.refresh_tokens
        .insert(refresh_token.clone(), sub.clone());
    let lifetime = book.lifetime_s;
    let access_token = sign(
        "rsa-1",
        &json!({"sub": sub, "iss": logins.issuer, "aud": AUDIENCE,
            "exp": now() + lifetime, "iat": now(), "memberships": memberships(&sub)}),
    );
    Json(json!({
        "access_token": access_token, "refresh_token": refresh_token, "expires_in": lifetime,
        "token_type": "Bearer", "id_token": "an-id-token-the-page-never-gets",
    }))
    .into_response()
}
