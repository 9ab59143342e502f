//! `chunk FILE...`: what the chunker makes of files (or folders of them), for tuning it.

use super::render;
use anyhow::Result;
use clap::Args;
use crowdvision_agent::config::{ChunkingConfig, Config, SizeUnit};
use crowdvision_agent::retrieval::chunk::{count_tokens, Chunker};
use crowdvision_agent::retrieval::source::discover;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Debug, Args)]
pub struct ChunkArgs {
    /// Markdown files, or folders to search for them.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// One JSON object a line: source, ordinal, section, kind, tokens, text.
    #[arg(long)]
    json: bool,
    /// Override CHUNK_SIZE_UNIT.
    #[arg(long, value_parser = ["tokens", "chars"])]
    unit: Option<String>,
    /// Override CHUNK_TARGET.
    #[arg(long)]
    target: Option<usize>,
    /// Override CHUNK_MAX.
    #[arg(long)]
    max: Option<usize>,
}

#[derive(serde::Serialize)]
struct ChunkLine<'a> {
    source: &'a str,
    ordinal: usize,
    section: String,
    kind: &'static str,
    tokens: usize,
    text: &'a str,
}

pub fn run(config: Config, args: ChunkArgs) -> Result<ExitCode> {
    let chunker = Chunker::new(settings(config.chunking, &args)?);
    let (files, errors) = discover(&args.files);
    let mut failed = errors.len();
    for error in &errors {
        eprintln!("error: {error}");
    }
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::new(stdout.lock());
    for file in &files {
        let text = match std::fs::read_to_string(&file.path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: {}: {e}", file.path.display());
                failed += 1;
                continue;
            }
        };
        let document = match chunker.chunk(&text) {
            Ok(document) => document,
            Err(e) => {
                eprintln!("error: {}: {e}", file.path.display());
                failed += 1;
                continue;
            }
        };
        if args.json {
            for chunk in &document.chunks {
                let line = ChunkLine {
                    source: &file.source,
                    ordinal: chunk.ordinal,
                    section: chunk.section_path(),
                    kind: chunk.kind.as_str(),
                    tokens: count_tokens(&chunk.text),
                    text: &chunk.text,
                };
                serde_json::to_writer(&mut out, &line)?;
                out.write_all(b"\n")?;
            }
        } else {
            writeln!(
                out,
                "{}",
                render::chunk_table(&file.source, &document.chunks)
            )?;
        }
    }
    out.flush()?;
    Ok(if failed > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn settings(base: ChunkingConfig, args: &ChunkArgs) -> Result<ChunkingConfig> {
    let unit = match args.unit.as_deref() {
        Some("chars") => SizeUnit::Chars,
        Some(_) => SizeUnit::Tokens,
        None => base.unit,
    };
    let target = args.target.unwrap_or(base.target);
    let max = args.max.unwrap_or(base.max.max(target));
    if target < 16 {
        return Err(super::usage("--target must be at least 16"));
    }
    if max < target {
        return Err(super::usage(format!(
            "--max ({max}) must be at least --target ({target})"
        )));
    }
    Ok(ChunkingConfig { unit, target, max })
}
