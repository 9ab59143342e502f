//! How big a piece of text is, in the unit the chunker limits: cl100k tokens or characters.

use crate::config::SizeUnit;

#[derive(Debug, Clone, Copy)]
pub struct Sizer {
    unit: SizeUnit,
}

impl Sizer {
    pub fn new(unit: SizeUnit) -> Sizer {
        if unit == SizeUnit::Tokens {
            // Load the tokenizer tables now rather than inside the first timed chunk.
            let _ = bpe_openai::cl100k_base();
        }
        Sizer { unit }
    }

    pub fn unit(&self) -> SizeUnit {
        self.unit
    }

    pub fn measure(&self, text: &str) -> usize {
        match self.unit {
            SizeUnit::Tokens => bpe_openai::cl100k_base().count(text),
            SizeUnit::Chars => text.chars().count(),
        }
    }

    /// Size of the blank-line separator placed between two packed parts.
    pub fn separator(&self) -> usize {
        match self.unit {
            SizeUnit::Tokens => 1,
            SizeUnit::Chars => 2,
        }
    }
}

/// Exact cl100k token count, for reporting a chunk's size whatever unit it was cut in.
pub fn count_tokens(text: &str) -> usize {
    bpe_openai::cl100k_base().count(text)
}
