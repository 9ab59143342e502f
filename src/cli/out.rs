//! Writing to stdout the way command-line tools do: when the reader has gone (`… | head`),
//! stop quietly with exit 0 instead of panicking; any other write failure is reported on
//! stderr with exit 1.

use std::io::Write;

/// Writes `text` to stdout and flushes it; see the module for how failures end the process.
pub fn write(text: std::fmt::Arguments<'_>) {
    let mut stdout = std::io::stdout().lock();
    let result = stdout.write_fmt(text).and_then(|()| stdout.flush());
    if let Err(error) = result {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: cannot write to stdout: {error}");
        std::process::exit(1);
    }
}

/// `print!` that ends quietly on a closed pipe.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!($($arg)*))
    };
}

/// `println!` that ends quietly on a closed pipe.
macro_rules! outln {
    () => {
        $crate::cli::out::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::cli::out::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

pub(crate) use {out, outln};
