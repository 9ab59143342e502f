//! URLs written as plain text, to hosts not allowed, taken out of what leaves: a GFM client
//! turns `https://host/…` and `www.host…` into links by itself, and chat tools unfurl them
//! (fetching the URL), so a model led astray could still carry the caller's data out in a bare
//! URL's query string even with every link and image neutralised (`links.rs`). Such a URL is
//! replaced by its host with the dots bracketed (`other[.]host`): the sentence keeps its words
//! and says where it pointed, and nothing in it is a URL or a domain a client would link. Code
//! spans are no exception (a chat tool unfurls those too). URLs to `LINK_ALLOWED_HOSTS` stay.
//!
//! [`UrlGuard`] does the same to streamed text: text that may still become such a URL is held
//! until it is decided, so no prefix of a stream ever holds one. Pure.

/// What starts a URL a client would link (lower case; matched ignoring case).
const STARTS: [&str; 4] = ["http://", "https://", "ftp://", "www."];

/// Longest URL held back in a stream before its host is sent and the rest dropped.
const MAX_HOLD_BYTES: usize = 2048;

/// `text` with every URL to a host not allowed replaced by its bracketed host.
pub fn defang(text: &str, allowed_hosts: &[String]) -> String {
    if !might_hold_url(text) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = url_start(rest) {
        out.push_str(&rest[..start]);
        let end = start + url_length(&rest[start..]);
        out.push_str(&replacement(&rest[start..end], allowed_hosts));
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

/// A cheap test before the scan: every start holds `//` or `www.`.
fn might_hold_url(text: &str) -> bool {
    text.contains("//") || text.contains("ww.") || text.contains("WW.")
}

/// Where the first URL of `text` starts.
fn url_start(text: &str) -> Option<usize> {
    let lower = text.to_ascii_lowercase();
    STARTS.iter().filter_map(|start| lower.find(start)).min()
}

/// Whether a URL starting at `at` in `text` has ended: the text ends there or holds a character
/// no URL runs through.
fn ends_url(c: char) -> bool {
    c.is_whitespace() || matches!(c, '<' | '>' | '"' | '\'' | '`')
}

/// The length of the URL `text` starts with: up to a character that ends it, less the
/// punctuation a sentence puts after a URL.
fn url_length(text: &str) -> usize {
    let mut whole = text.find(ends_url).unwrap_or(text.len());
    // A URL start after the host is a URL of its own (`https://allowed/xhttp://other/…`).
    let scheme = scheme_length(text);
    let path = text[scheme..whole]
        .find(['/', '?', '#'])
        .map_or(whole, |at| scheme + at);
    if let Some(next) = url_start(&text[path..whole]) {
        whole = path + next;
    }
    let trimmed =
        text[..whole].trim_end_matches(['.', ',', ':', ';', '!', '?', ')', '*', '_', '~']);
    trimmed.len().max(scheme_length(trimmed))
}

/// The bytes of `url`'s start pattern (so a lone `www.` or `http://` is still one URL).
fn scheme_length(url: &str) -> usize {
    let lower = url.to_ascii_lowercase();
    STARTS
        .iter()
        .find(|start| lower.starts_with(*start))
        .map_or(0, |start| start.len())
}

/// What is written instead of `url`: itself when its host is allowed, else its host with the
/// dots bracketed (nothing when it names no host).
fn replacement(url: &str, allowed_hosts: &[String]) -> String {
    let absolute = if url.to_ascii_lowercase().starts_with("www.") {
        format!("https://{url}")
    } else {
        url.to_string()
    };
    if allowed(&absolute, allowed_hosts) {
        return url.to_string();
    }
    host(&absolute).unwrap_or_default().replace('.', "[.]")
}

/// Streamed text made free of URLs to hosts not allowed as it goes (see the module doc).
#[derive(Debug, Default)]
pub struct UrlGuard {
    held: String,
    allowed_hosts: Vec<String>,
    /// The held URL grew past [`MAX_HOLD_BYTES`]: its host went out, the rest is dropped until
    /// the URL ends.
    dropping: bool,
}

impl UrlGuard {
    pub fn new(allowed_hosts: &[String]) -> UrlGuard {
        UrlGuard {
            allowed_hosts: allowed_hosts.to_vec(),
            ..UrlGuard::default()
        }
    }

    /// Takes the next piece of text; returns what may be shown now.
    pub fn push(&mut self, piece: &str) -> String {
        let mut piece = piece;
        if self.dropping {
            match piece.find(ends_url) {
                Some(end) => {
                    self.dropping = false;
                    piece = &piece[end..];
                }
                None => return String::new(),
            }
        }
        self.held.push_str(piece);
        let mut shown = String::new();
        loop {
            let Some(start) = url_start(&self.held) else {
                let keep = self.held.len() - possible_start_suffix(&self.held);
                shown.extend(self.held.drain(..keep));
                return shown;
            };
            shown.extend(self.held.drain(..start));
            match self.held.find(ends_url) {
                Some(end) => {
                    let length = url_length(&self.held[..end]);
                    let url: String = self.held.drain(..length).collect();
                    shown.push_str(&replacement(&url, &self.allowed_hosts));
                }
                None if self.held.len() > MAX_HOLD_BYTES => {
                    shown.push_str(&replacement(&self.held, &self.allowed_hosts));
                    self.held.clear();
                    self.dropping = true;
                    return shown;
                }
                None => return shown,
            }
        }
    }

    /// The end of the text: what is held is decided as it stands.
    pub fn finish(&mut self) -> String {
        self.dropping = false;
        defang(&std::mem::take(&mut self.held), &self.allowed_hosts)
    }
}

/// How many bytes at the end of `text` could still grow into the start of a URL.
fn possible_start_suffix(text: &str) -> usize {
    let lower = text.to_ascii_lowercase();
    (1..=7)
        .rev()
        .filter(|n| *n <= lower.len() && lower.is_char_boundary(lower.len() - n))
        .find(|n| {
            let tail = &lower[lower.len() - n..];
            STARTS
                .iter()
                .any(|start| start.len() > tail.len() && start.starts_with(tail))
        })
        .unwrap_or(0)
}

/// A relative URL (no scheme, not protocol-relative) or one whose host is allowed.
pub(crate) fn allowed(url: &str, allowed_hosts: &[String]) -> bool {
    let url = url.trim();
    let has_scheme = url.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    // Relative only when nothing in it could be read as a host (found by the fuzz suite:
    // `![](![x](http://…))` has the destination `![x](http://…`).
    if !has_scheme && !url.contains("//") && !url.contains('\\') {
        return true;
    }
    let Some(host) = host(url) else {
        return false;
    };
    let host = host.to_ascii_lowercase();
    allowed_hosts.iter().any(|allowed| {
        let allowed = allowed.trim().to_ascii_lowercase();
        !allowed.is_empty() && (host == allowed || host.ends_with(&format!(".{allowed}")))
    })
}

/// The host of an absolute URL (`https://user@host:8080/x` → `host`), or of `mailto:a@host`.
pub(crate) fn host(url: &str) -> Option<&str> {
    let rest = match url.split_once("//") {
        Some((_, rest)) => rest,
        None => url.split_once(':')?.1,
    };
    let authority = rest.split(['/', '?', '#']).next()?;
    let host = authority.rsplit('@').next()?;
    let host = host.split(':').next()?;
    (!host.is_empty()).then_some(host)
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn hosts(list: &[&str]) -> Vec<String> {
        list.iter().map(|h| h.to_string()).collect()
    }

    #[test]
    fn a_bare_url_to_another_host_keeps_the_words_and_loses_the_url() {
        let cases = [
            (
                "See http://other.host/h?d=Room+Aurora+6+people for more.",
                "See other[.]host for more.",
            ),
            (
                "Visit www.evil.example/x?d=1.",
                "Visit www[.]evil[.]example.",
            ),
            (
                "(https://evil.example/a)b?d=SECRET) ok",
                "(evil[.]example) ok",
            ),
            ("HTTPS://EVIL.example/x", "EVIL[.]example"),
            (
                "&lt;img src=\"http://other.host/h?d=SECRET\"> shown",
                "&lt;img src=\"other[.]host\"> shown",
            ),
            ("`curl https://evil.example/x`", "`curl evil[.]example`"),
            ("just http:// here", "just  here"),
            (
                "https://docs.crowdvision.io/okhttp://evil.example/c?d=SECRET",
                "https://docs.crowdvision.io/okevil[.]example",
            ),
        ];
        let allowed = hosts(&["crowdvision.io"]);
        for (text, expected) in cases {
            assert_eq!(defang(text, &allowed), expected, "{text}");
        }
    }

    #[test]
    fn allowed_hosts_and_text_without_urls_are_kept() {
        let allowed = hosts(&["crowdvision.io"]);
        for text in [
            "See https://docs.crowdvision.io/rooms?x=1 and www.crowdvision.io.",
            "CO2 above 1000 ppm // ventilate; a/b and w. and wwwx",
        ] {
            assert_eq!(defang(text, &allowed), text);
        }
    }

    #[test]
    fn a_stream_holds_only_what_may_become_a_url() {
        let mut guard = UrlGuard::new(&[]);
        assert_eq!(
            guard.push("The lobby is open, see ht"),
            "The lobby is open, see "
        );
        assert_eq!(guard.push("tps://evil"), "");
        assert_eq!(guard.push(".example/x?d=SEC"), "");
        // "w" could still open "www.": held until the next piece says it does not.
        assert_eq!(guard.push("RET now"), "evil[.]example no");
        assert_eq!(guard.push(" with"), "w wit");
        assert_eq!(guard.finish(), "h");
    }

    #[test]
    fn a_url_longer_than_the_hold_sends_its_host_and_drops_the_rest() {
        let mut guard = UrlGuard::new(&[]);
        let sent = guard.push(&format!("go http://evil.example/{}", "a".repeat(3000)));
        assert_eq!(sent, "go evil[.]example");
        assert_eq!(guard.push(&"b".repeat(100)), "");
        assert_eq!(guard.push("c done"), " done");
        assert_eq!(guard.finish(), "");
    }

    /// Bare URLs to a foreign host, with a secret, in and around markup and escaped HTML.
    fn text_with_urls() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z0-9 .,()]{0,20}",
            Just("http://evil.example/c?d=SECRET".to_string()),
            Just("HTTPS://EVIL.example/SECRET".to_string()),
            Just("www.evil.example/SECRET".to_string()),
            Just("&lt;img src=\"https://evil.example/SECRET\">".to_string()),
            Just("`ftp://evil.example/SECRET`".to_string()),
            Just("https://docs.crowdvision.io/ok".to_string()),
            Just("wit h ht tp: www ".to_string()),
        ];
        proptest::collection::vec(piece, 1..8).prop_map(|p| p.concat())
    }

    proptest! {
        #[test]
        fn no_prefix_of_a_stream_holds_a_foreign_url(
            text in text_with_urls(),
            cuts in proptest::collection::vec(0usize..300, 0..12),
        ) {
            let allowed = hosts(&["crowdvision.io"]);
            let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (text.len() + 1)).collect();
            points.sort_unstable();
            points.dedup();
            let mut guard = UrlGuard::new(&allowed);
            let (mut sent, mut last) = (String::new(), 0);
            for point in points.into_iter().chain([text.len()]) {
                sent.push_str(&guard.push(&text[last..point]));
                last = point;
                prop_assert!(!sent.contains("SECRET") && !sent.to_lowercase().contains("evil.example"), "{sent}");
            }
            sent.push_str(&guard.finish());
            prop_assert!(!sent.contains("SECRET") && !sent.to_lowercase().contains("evil.example"), "{sent}");
            prop_assert_eq!(&sent, &defang(&text, &allowed), "the stream says what the answer says");
        }
    }
}
