//! JSON written straight into bytes, for the bodies made on every answer (the provider request,
//! the `/ask` response): strings escaped exactly as serde_json escapes them, plain runs found
//! eight bytes at a time, without serde's per-byte table or per-field machinery (BENCHMARKS.md,
//! "Instructions per served answer"). Every body written with these is held equal to serde's
//! by a property test. Pure.

/// `items` as a JSON array, each written by `write_item`.
pub fn write_list<T>(out: &mut Vec<u8>, items: &[T], write_item: impl Fn(&mut Vec<u8>, &T)) {
    out.push(b'[');
    for (index, item) in items.iter().enumerate() {
        if index > 0 {
            out.push(b',');
        }
        write_item(out, item);
    }
    out.push(b']');
}

/// `value` in decimal, as serde writes it.
pub fn write_u64(out: &mut Vec<u8>, value: u64) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest = value;
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[at..]);
}

pub fn write_bool(out: &mut Vec<u8>, value: bool) {
    out.extend_from_slice(if value { b"true" } else { b"false" });
}

/// `text` as a JSON string, escaped as serde_json escapes it: `"` and `\` with a backslash,
/// the control characters below U+0020 as `\b \t \n \f \r` or `\u00xx`, everything else as it
/// is. Runs of plain text are found eight bytes at a time and copied whole.
pub fn write_str(out: &mut Vec<u8>, text: &str) {
    let bytes = text.as_bytes();
    out.reserve(bytes.len() + 2);
    out.push(b'"');
    let mut copied_to = 0;
    let mut escape_at = |at: usize, out: &mut Vec<u8>| {
        out.extend_from_slice(&bytes[copied_to..at]);
        write_escape(out, bytes[at]);
        copied_to = at + 1;
    };
    let words = bytes.chunks_exact(8);
    let tail_start = bytes.len() - words.remainder().len();
    for (index, word) in words.enumerate() {
        if may_need_escape(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
            for (offset, byte) in word.iter().enumerate() {
                if needs_escape(*byte) {
                    escape_at(index * 8 + offset, out);
                }
            }
        }
    }
    for (offset, byte) in bytes[tail_start..].iter().enumerate() {
        if needs_escape(*byte) {
            escape_at(tail_start + offset, out);
        }
    }
    out.extend_from_slice(&bytes[copied_to..]);
    out.push(b'"');
}

fn needs_escape(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// Whether any of the eight bytes in `word` may need an escape (never false when one does).
fn may_need_escape(word: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGH_BITS: u64 = 0x8080_8080_8080_8080;
    // A byte below `n` (n ≤ 0x80) leaves its high bit set in `x - n` where `x` had it clear.
    let below_space = word.wrapping_sub(ONES * 0x20) & !word;
    let quote = word ^ (ONES * u64::from(b'"'));
    let backslash = word ^ (ONES * u64::from(b'\\'));
    let zero_byte = |x: u64| x.wrapping_sub(ONES) & !x;
    (below_space | zero_byte(quote) | zero_byte(backslash)) & HIGH_BITS != 0
}

fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    match byte {
        b'"' => out.extend_from_slice(b"\\\""),
        b'\\' => out.extend_from_slice(b"\\\\"),
        0x08 => out.extend_from_slice(b"\\b"),
        0x0C => out.extend_from_slice(b"\\f"),
        b'\n' => out.extend_from_slice(b"\\n"),
        b'\r' => out.extend_from_slice(b"\\r"),
        b'\t' => out.extend_from_slice(b"\\t"),
        _ => out.extend_from_slice(&[
            b'\\',
            b'u',
            b'0',
            b'0',
            HEX[usize::from(byte >> 4)],
            HEX[usize::from(byte & 0xF)],
        ]),
    }
}

/// Text for property tests of JSON writers: any characters, and runs dense in escapes.
#[cfg(test)]
pub(crate) fn arbitrary_text() -> impl proptest::strategy::Strategy<Value = String> {
    proptest::prop_oneof![".{0,80}", "[a-z \"\\\\\n\t\u{0}-\u{1f}\u{7f}é漢]{0,40}",]
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn escaped(text: &str) -> String {
        let mut out = Vec::new();
        write_str(&mut out, text);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn every_byte_that_needs_an_escape_is_escaped_as_serde_escapes_it() {
        for byte in 0u8..=0x7F {
            let text = format!("ab{}cdefghij{}", byte as char, byte as char);
            assert_eq!(
                escaped(&text),
                serde_json::to_string(&text).unwrap(),
                "{byte}"
            );
        }
        assert_eq!(escaped("é ß 漢 🙂"), "\"é ß 漢 🙂\"");
    }

    fn text() -> impl Strategy<Value = String> {
        arbitrary_text()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(crate::fuzz_cases(256)))]

        #[test]
        fn plain_and_escaped_text_is_written_as_serde_writes_it(text in text()) {
            prop_assert_eq!(escaped(&text), serde_json::to_string(&text).unwrap());
        }

        #[test]
        fn numbers_are_written_as_serde_writes_them(value in any::<u64>()) {
            let mut out = Vec::new();
            write_u64(&mut out, value);
            prop_assert_eq!(out, serde_json::to_vec(&value).unwrap());
        }
    }
}
