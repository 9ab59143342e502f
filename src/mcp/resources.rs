//! What the MCP server offers as resources, without IO: the documentation pages the caller may
//! read (`crowdvision://docs/{source}`), and two templates that read live data through the
//! tools (`crowdvision://buildings/{building_id}` and
//! `crowdvision://buildings/{building_id}/rooms/{room_id}`). A URI is parsed into the read it
//! stands for; `mod.rs` runs that read as the caller, through the store's permission filter
//! or the tool's own checks.
//!
//! Unknown and forbidden look the same: a page the caller may not see, a building of another
//! domain, a room that does not exist and a URI of no known form all get one error,
//! [`not_found`], that names nothing the caller could not name already.

use crate::retrieval::store::{PageEntry, RetrievedChunk};
use rmcp::model::{ErrorData, Resource, ResourceTemplate};
use serde_json::{json, Value};

/// The scheme and authority every resource URI starts with.
const ROOT: &str = "crowdvision://";

const PAGE_PREFIX: &str = "crowdvision://docs/";
const BUILDING_PREFIX: &str = "crowdvision://buildings/";

const MARKDOWN: &str = "text/markdown";
const JSON: &str = "application/json";

/// The longest URI read at all: longer ones cannot name anything stored.
const MAX_URI_CHARS: usize = 1024;

/// What a resource URI asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Read {
    /// A documentation page by its source path (`user/rooms.md`).
    Page { source: String },
    /// A building through `get_building`.
    Building { building_id: String },
    /// A room through `get_room`.
    Room {
        building_id: String,
        room_id: String,
    },
}

impl Read {
    /// The tool and arguments a live read runs; `None` for a page.
    pub fn tool_call(&self) -> Option<(&'static str, Value)> {
        match self {
            Read::Page { .. } => None,
            Read::Building { building_id } => {
                Some(("get_building", json!({ "building_id": building_id })))
            }
            Read::Room {
                building_id,
                room_id,
            } => Some((
                "get_room",
                json!({ "building_id": building_id, "room_id": room_id }),
            )),
        }
    }
}

/// The URI of a documentation page.
pub fn page_uri(source: &str) -> String {
    format!("{PAGE_PREFIX}{}", encode_path(source))
}

/// Reads a URI; `None` when it is of no known form.
pub fn parse(uri: &str) -> Option<Read> {
    if uri.chars().count() > MAX_URI_CHARS || !uri.starts_with(ROOT) {
        return None;
    }
    if let Some(path) = uri.strip_prefix(PAGE_PREFIX) {
        let source = decode_path(path)?;
        let well_formed = !source.is_empty()
            && !source.starts_with('/')
            && source
                .split('/')
                .all(|part| !part.is_empty() && part != "..");
        return well_formed.then_some(Read::Page { source });
    }
    let rest = uri.strip_prefix(BUILDING_PREFIX)?;
    let parts: Vec<String> = rest
        .split('/')
        .map(decode_segment)
        .collect::<Option<Vec<_>>>()?;
    if parts.iter().any(|part| part.trim().is_empty()) {
        return None;
    }
    match parts.as_slice() {
        [building_id] => Some(Read::Building {
            building_id: building_id.clone(),
        }),
        [building_id, rooms, room_id] if rooms == "rooms" => Some(Read::Room {
            building_id: building_id.clone(),
            room_id: room_id.clone(),
        }),
        _ => None,
    }
}

/// The one answer for a URI that names nothing the caller may read.
pub fn not_found(uri: &str) -> ErrorData {
    let shown: String = uri.chars().take(120).collect();
    ErrorData::resource_not_found(format!("resource not found: {shown}"), None)
}

/// Pages listed per `resources/list` response.
pub const PAGE_SIZE: usize = 100;

/// One page of a listing: the entries after `cursor` (the source the previous page ended with;
/// entries come in byte order of their source, as both stores sort them), at most `size`, and
/// the cursor of the next page when more follow. Any cursor is a place in that order, so a page
/// added or removed between two requests neither repeats nor skips another.
pub fn page_after<'a>(
    entries: &'a [PageEntry],
    cursor: Option<&str>,
    size: usize,
) -> (&'a [PageEntry], Option<String>) {
    let start = cursor.map_or(0, |after| {
        entries.partition_point(|entry| entry.source.as_str() <= after)
    });
    let end = (start + size).min(entries.len());
    let next = (end < entries.len()).then(|| entries[end - 1].source.clone());
    (&entries[start..end], next)
}

/// The caller's pages as listed resources.
pub fn listed(pages: &[PageEntry]) -> Vec<Resource> {
    pages
        .iter()
        .map(|page| {
            let resource =
                Resource::new(page_uri(&page.source), page.source.clone()).with_mime_type(MARKDOWN);
            match &page.title {
                Some(title) => resource.with_title(title.clone()),
                None => resource,
            }
        })
        .collect()
}

/// The two live templates.
pub fn templates() -> Vec<ResourceTemplate> {
    let building = ResourceTemplate::new(format!("{BUILDING_PREFIX}{{building_id}}"), "building")
        .with_title("A building and its rooms")
        .with_description(
            "A building you may see: name, domain, address and its rooms (id, name, floor, \
             capacity), as get_building returns it.",
        )
        .with_mime_type(JSON);
    let room = ResourceTemplate::new(
        format!("{BUILDING_PREFIX}{{building_id}}/rooms/{{room_id}}"),
        "room",
    )
    .with_title("A room and its occupancy now")
    .with_description(
        "One room: name, floor, capacity and current occupancy, as get_room returns it.",
    )
    .with_mime_type(JSON);
    vec![building, room]
}

/// A page's text from its chunks in order (each chunk carries its own heading lines), or
/// `None` when the caller may see none of it.
pub fn page_text(chunks: &[RetrievedChunk]) -> Option<String> {
    if chunks.is_empty() {
        return None;
    }
    let parts: Vec<&str> = chunks.iter().map(|chunk| chunk.text.as_str()).collect();
    Some(parts.join("\n\n"))
}

/// The MIME type of a read's contents.
pub fn mime_type(read: &Read) -> &'static str {
    match read {
        Read::Page { .. } => MARKDOWN,
        _ => JSON,
    }
}

/// Source paths keep their slashes; anything outside unreserved characters is percent-encoded.
fn encode_path(source: &str) -> String {
    source
        .split('/')
        .map(encode_segment)
        .collect::<Vec<_>>()
        .join("/")
}

fn encode_segment(segment: &str) -> String {
    let mut out = String::with_capacity(segment.len());
    for byte in segment.bytes() {
        if byte.is_ascii_alphanumeric() || b"-._~".contains(&byte) {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

fn decode_path(path: &str) -> Option<String> {
    let parts = path
        .split('/')
        .map(decode_segment)
        .collect::<Option<Vec<_>>>()?;
    if parts.iter().any(|part| part.contains('/')) {
        return None;
    }
    Some(parts.join("/"))
}

/// Percent-decodes one segment; `None` for a malformed escape, text that is not UTF-8, or a
/// control character.
fn decode_segment(segment: &str) -> Option<String> {
    let bytes = segment.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    let text = String::from_utf8(out).ok()?;
    (!text.chars().any(char::is_control)).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page(source: &str) -> Option<Read> {
        Some(Read::Page {
            source: source.into(),
        })
    }

    #[test]
    fn uris_are_read_into_what_they_name() {
        let building = |b: &str| {
            Some(Read::Building {
                building_id: b.into(),
            })
        };
        let room = |b: &str, r: &str| {
            Some(Read::Room {
                building_id: b.into(),
                room_id: r.into(),
            })
        };
        let table = [
            ("crowdvision://docs/user/rooms.md", page("user/rooms.md")),
            ("crowdvision://docs/a%20b.md", page("a b.md")),
            ("crowdvision://buildings/acme-hq", building("acme-hq")),
            (
                "crowdvision://buildings/acme-hq/rooms/hq-201",
                room("acme-hq", "hq-201"),
            ),
            ("crowdvision://docs/", None),
            ("crowdvision://docs/../secret.md", None),
            ("crowdvision://docs/a//b.md", None),
            ("crowdvision://docs/a%2Fb.md", None),
            ("crowdvision://docs/%zz.md", None),
            ("crowdvision://docs/%0A.md", None),
            ("crowdvision://buildings/", None),
            ("crowdvision://buildings/acme-hq/rooms", None),
            ("crowdvision://buildings/acme-hq/floors/2", None),
            ("crowdvision://buildings/acme-hq/rooms/hq-201/x", None),
            ("file:///etc/passwd", None),
            ("https://example.com/docs/user/rooms.md", None),
        ];
        for (uri, want) in table {
            assert_eq!(parse(uri), want, "{uri}");
        }
        let long = format!("crowdvision://docs/{}.md", "a".repeat(2000));
        assert_eq!(parse(&long), None);
    }

    #[test]
    fn a_page_uri_reads_back_as_its_source() {
        for source in ["user/rooms.md", "ops/co2 levels (EU).md", "é/ü.md"] {
            assert_eq!(parse(&page_uri(source)), page(source), "{source}");
        }
    }

    #[test]
    fn live_reads_become_tool_calls() {
        let read = parse("crowdvision://buildings/acme-hq/rooms/hq-201").unwrap();
        assert_eq!(
            read.tool_call(),
            Some((
                "get_room",
                json!({"building_id": "acme-hq", "room_id": "hq-201"})
            ))
        );
        assert_eq!(page("a.md").unwrap().tool_call(), None);
    }

    #[test]
    fn a_page_is_its_chunks_in_order_and_nothing_when_none_is_visible() {
        let chunk = |text: &str| RetrievedChunk {
            chunk_id: "c".into(),
            source: "a.md".into(),
            section: "A".into(),
            kind: "prose".into(),
            text: text.into(),
        };
        assert_eq!(
            page_text(&[chunk("# A\nfirst"), chunk("## B\nsecond")]).as_deref(),
            Some("# A\nfirst\n\n## B\nsecond")
        );
        assert_eq!(page_text(&[]), None);
    }

    #[test]
    fn a_listing_is_paged_after_its_cursor() {
        let entries: Vec<PageEntry> = ["a.md", "b.md", "c.md", "d.md", "e.md"]
            .iter()
            .map(|source| PageEntry {
                source: source.to_string(),
                title: None,
            })
            .collect();
        let sources = |page: &[PageEntry]| -> Vec<String> {
            page.iter().map(|entry| entry.source.clone()).collect()
        };
        let (first, next) = page_after(&entries, None, 2);
        assert_eq!(
            (sources(first), next.as_deref()),
            (vec!["a.md".into(), "b.md".into()], Some("b.md"))
        );
        let (second, next) = page_after(&entries, next.as_deref(), 2);
        assert_eq!(
            (sources(second), next.as_deref()),
            (vec!["c.md".into(), "d.md".into()], Some("d.md"))
        );
        let (last, next) = page_after(&entries, next.as_deref(), 2);
        assert_eq!((sources(last), next), (vec!["e.md".to_string()], None));
        // A cursor between entries (one removed since) or past the end.
        let (after_gone, _) = page_after(&entries, Some("bb.md"), 2);
        assert_eq!(sources(after_gone), ["c.md", "d.md"]);
        let (past, next) = page_after(&entries, Some("z.md"), 2);
        assert!(past.is_empty() && next.is_none());
        let (all, next) = page_after(&entries, None, 100);
        assert_eq!((all.len(), next), (5, None));
    }

    #[test]
    fn not_found_says_the_same_for_every_reason_and_is_short() {
        let error = not_found(&format!("crowdvision://docs/{}", "x".repeat(5000)));
        assert_eq!(error.code, rmcp::model::ErrorCode::RESOURCE_NOT_FOUND);
        assert!(error.message.len() < 160, "{}", error.message);
    }
}
